import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@lib/shared';
import { loadPricingTokenKey, PRICING_TOKEN_KEY_FILE } from './pricing-token-key';

describe('the pricing token key', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'pricing-key-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is PRICING_TOKEN_SECRET when set, and no file is written', () => {
    const secret = 's'.repeat(40);
    expect(loadPricingTokenKey({ PRICING_TOKEN_SECRET: secret }, dataDir)).toEqual(Buffer.from(secret));
    expect(() => statSync(join(dataDir, PRICING_TOKEN_KEY_FILE))).toThrow();
  });

  it('refuses a short PRICING_TOKEN_SECRET with a message naming the variable', () => {
    expect(() => loadPricingTokenKey({ PRICING_TOKEN_SECRET: 'short' }, dataDir)).toThrow(ConfigError);
    expect(() => loadPricingTokenKey({ PRICING_TOKEN_SECRET: 'short' }, dataDir)).toThrow(/PRICING_TOKEN_SECRET/);
  });

  it('is otherwise generated once into DATA_DIR/pricing-token.key, readable by its owner only, and reused', () => {
    const first = loadPricingTokenKey({}, dataDir);
    expect(first.length).toBe(32);
    const file = join(dataDir, PRICING_TOKEN_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadPricingTokenKey({}, dataDir)).toEqual(first);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.toString('base64url'));
  });

  it('refuses a key file without a usable key', () => {
    writeFileSync(join(dataDir, PRICING_TOKEN_KEY_FILE), 'tiny\n');
    expect(() => loadPricingTokenKey({}, dataDir)).toThrow(/pricing-token\.key/);
  });
});
