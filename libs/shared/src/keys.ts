import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config';

/** The least key material any of the product's HMAC keys may have. */
const MIN_KEY_BYTES = 32;

/**
 * A key from its variable (at least 32 characters) when set, else 32 random bytes generated once
 * into `DATA_DIR/<fileName>` and read back by every process sharing the directory. Every process
 * that issues or checks what the key signs must use the same key: share the file or set the
 * variable.
 */
export function loadKey(secret: string | undefined, dataDir: string, variable: string, fileName: string): Buffer {
  const value = secret?.trim();
  if (value) {
    if (value.length < MIN_KEY_BYTES) throw new ConfigError(variable, `must be at least ${MIN_KEY_BYTES} characters`);
    return Buffer.from(value, 'utf8');
  }
  const file = join(dataDir, fileName);
  try {
    createOnce(file, `${randomBytes(MIN_KEY_BYTES).toString('base64url')}\n`);
  } catch (error) {
    throw new ConfigError(variable, `is unset, and a key cannot be generated into ${file}: ${(error as Error).message}`);
  }
  const key = keyInFile(file);
  if (key === null) throw new ConfigError(variable, `is unset and ${file} holds no usable key (delete it to generate a new one)`);
  return key;
}

/**
 * The key generated into `DATA_DIR/<fileName>` by an earlier start without the variable; null
 * when there is none. Read whether or not the variable is set now, for a key the variable replaced.
 */
export function generatedKey(dataDir: string, fileName: string): Buffer | null {
  const file = join(dataDir, fileName);
  return existsSync(file) ? keyInFile(file) : null;
}

function keyInFile(file: string): Buffer | null {
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
  return key.length < MIN_KEY_BYTES ? null : key;
}

/**
 * Publishes the file atomically: processes starting together all end up reading the same key.
 * Writes nothing when the file exists, and leaves no draft behind when the write fails (a full
 * disk left an empty draft at every start until 2026-11-28, found by a review).
 */
function createOnce(file: string, content: string): void {
  if (existsSync(file)) return;
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(draft, content, { mode: 0o600 });
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(draft, { force: true });
  }
}
