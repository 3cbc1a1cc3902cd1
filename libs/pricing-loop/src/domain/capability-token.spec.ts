import { createHash, createHmac, randomBytes } from 'node:crypto';
import { CapabilityTokens, hashCapabilityToken, isWellFormedCapabilityToken } from './capability-token';

const key = Buffer.alloc(32, 7);
const tokens = new CapabilityTokens(key);

describe('capability tokens', () => {
  it('are pct_ + base64url(HMAC-SHA256(key, "<deliveryId>:<generation>"))', () => {
    const token = tokens.derive('evt_1', 1);
    expect(token).toBe(`pct_${createHmac('sha256', key).update('evt_1:1').digest('base64url')}`);
    expect(isWellFormedCapabilityToken(token)).toBe(true);
  });

  it('are the same for every attempt of a delivery generation, and new for the next generation, another delivery or another key', () => {
    const token = tokens.derive('evt_1', 1);
    expect(tokens.derive('evt_1', 1)).toBe(token);
    expect(tokens.derive('evt_1', 2)).not.toBe(token);
    expect(tokens.derive('evt_2', 1)).not.toBe(token);
    expect(new CapabilityTokens(randomBytes(32)).derive('evt_1', 1)).not.toBe(token);
    // the separator keeps ("evt_1", 12) and ("evt_11", 2) apart
    expect(tokens.derive('evt_1', 12)).not.toBe(tokens.derive('evt_11', 2));
  });

  it('verify only for the delivery generation and key they were derived for', () => {
    const token = tokens.derive('evt_1', 3);
    expect(tokens.matches(token, 'evt_1', 3)).toBe(true);
    expect(tokens.matches(token, 'evt_1', 2)).toBe(false);
    expect(tokens.matches(token, 'evt_2', 3)).toBe(false);
    expect(new CapabilityTokens(randomBytes(32)).matches(token, 'evt_1', 3)).toBe(false);
  });

  it('refuse forged and malformed tokens', () => {
    const token = tokens.derive('evt_1', 1);
    const forged = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    for (const bad of [forged, token.slice(0, -1), `${token}A`, token.replace('pct_', 'pcx_'), '', 'pct_', `pct_${'!'.repeat(43)}`]) {
      expect(tokens.matches(bad, 'evt_1', 1)).toBe(false);
    }
    expect(isWellFormedCapabilityToken(`pct_${'a'.repeat(42)}`)).toBe(false);
  });

  it('are recorded as their hex SHA-256, which does not reveal them', () => {
    const token = tokens.derive('evt_1', 1);
    expect(hashCapabilityToken(token)).toBe(createHash('sha256').update(token).digest('hex'));
    expect(hashCapabilityToken(token)).not.toContain(token.slice(4, 20));
  });

  it('need a key of at least 32 bytes', () => {
    expect(() => new CapabilityTokens(Buffer.alloc(31))).toThrow(RangeError);
  });
});
