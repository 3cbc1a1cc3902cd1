import { loadKey } from '@lib/shared';

export const PRICING_TOKEN_KEY_FILE = 'pricing-token.key';

/**
 * The key capability tokens are derived with: `PRICING_TOKEN_SECRET` (at least 32 characters)
 * when set, else 32 random bytes generated once into `DATA_DIR/pricing-token.key`. Every process
 * that issues or checks tokens (gateway, outbox) must use the same key: share the file or set the
 * variable. Replacing the key revokes every outstanding token.
 */
export function loadPricingTokenKey(env: Record<string, string | undefined>, dataDir: string): Buffer {
  return loadKey(env.PRICING_TOKEN_SECRET, dataDir, 'PRICING_TOKEN_SECRET', PRICING_TOKEN_KEY_FILE);
}
