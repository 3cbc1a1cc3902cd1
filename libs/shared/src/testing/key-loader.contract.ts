import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../config';

/**
 * What every key the product holds promises (loadKey): the variable when set, else 32 random bytes
 * generated once into DATA_DIR/<file>, readable by its owner only, and reused.
 */
export function describeKeyLoader(what: string, load: (env: Record<string, string | undefined>, dataDir: string) => Buffer, variable: string, file: string): void {
  describe(what, () => {
    let dataDir: string;
    beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'key-loader-'))));
    afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

    it(`is ${variable} when set, and no file is written`, () => {
      const secret = 's'.repeat(40);
      expect(load({ [variable]: secret }, dataDir)).toEqual(Buffer.from(secret));
      expect(() => statSync(join(dataDir, file))).toThrow();
    });

    it(`refuses a short ${variable} with a message naming the variable`, () => {
      expect(() => load({ [variable]: 'short' }, dataDir)).toThrow(ConfigError);
      expect(() => load({ [variable]: 'short' }, dataDir)).toThrow(variable);
    });

    it(`is otherwise generated once into DATA_DIR/${file}, readable by its owner only, and reused`, () => {
      const first = load({}, dataDir);
      expect(first.length).toBe(32);
      const path = join(dataDir, file);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(load({}, dataDir)).toEqual(first);
      expect(readFileSync(path, 'utf8').trim()).toBe(first.toString('base64url'));
    });

    it('refuses a key file without a usable key', () => {
      writeFileSync(join(dataDir, file), 'tiny\n');
      expect(() => load({}, dataDir)).toThrow(file);
    });
  });
}
