import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './config';
import { loadKey } from './keys';

// The module object itself (an `import *` is a copy of it): what keys.ts calls through.
const fs: typeof import('node:fs') = require('node:fs');

describe('loadKey without its variable: a key generated once into DATA_DIR', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'keys-'))));
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('generates the key once, and every later load reads the same one, writing nothing', () => {
    const first = loadKey(undefined, dir, 'TEST_KEY', 'test.key');
    const write = jest.spyOn(fs, 'writeFileSync');
    expect(loadKey(undefined, dir, 'TEST_KEY', 'test.key')).toEqual(first);
    expect(write).not.toHaveBeenCalled();
    expect(readdirSync(dir)).toEqual(['test.key']);
  });

  it('given a disk too full to write the key, then it names the variable and the file, and leaves no draft behind', () => {
    jest.spyOn(fs, 'writeFileSync').mockImplementation((path) => {
      fs.closeSync(fs.openSync(path as string, 'w'));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    const error = (() => {
      try {
        loadKey(undefined, dir, 'TEST_KEY', 'test.key');
      } catch (caught) {
        return caught as Error;
      }
      throw new Error('expected a refusal');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain('TEST_KEY');
    expect(error.message).toContain(`${join(dir, 'test.key')}: ENOSPC: no space left on device`);
    expect(readdirSync(dir)).toEqual([]);
  });
});
