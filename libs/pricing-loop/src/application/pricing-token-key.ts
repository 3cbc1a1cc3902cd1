import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '@lib/shared';
import { MIN_KEY_BYTES } from '../domain/capability-token';

export const PRICING_TOKEN_KEY_FILE = 'pricing-token.key';

/**
 * The key capability tokens are derived with: `PRICING_TOKEN_SECRET` (at least 32 characters)
 * when set, else 32 random bytes generated once into `DATA_DIR/pricing-token.key`. Every process
 * that issues or checks tokens (gateway, outbox) must use the same key: share the file or set the
 * variable. Replacing the key revokes every outstanding token.
 */
export function loadPricingTokenKey(env: Record<string, string | undefined>, dataDir: string): Buffer {
  const secret = env.PRICING_TOKEN_SECRET?.trim();
  if (secret) {
    if (secret.length < MIN_KEY_BYTES) throw new ConfigError('PRICING_TOKEN_SECRET', `must be at least ${MIN_KEY_BYTES} characters`);
    return Buffer.from(secret, 'utf8');
  }
  const file = join(dataDir, PRICING_TOKEN_KEY_FILE);
  createOnce(file, `${randomBytes(MIN_KEY_BYTES).toString('base64url')}\n`);
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
  if (key.length < MIN_KEY_BYTES) throw new ConfigError('PRICING_TOKEN_SECRET', `is unset and ${file} holds no usable key (delete it to generate a new one)`);
  return key;
}

/** Publishes the file atomically: processes starting together all end up reading the same key. */
function createOnce(file: string, content: string): void {
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(draft, content, { mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
}
