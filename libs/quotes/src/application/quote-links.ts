import { createHmac } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { loadKey, type AppConfig } from '@lib/shared';

export const QUOTE_LINK_KEY_FILE = 'quote-link.key';
const TOKEN_LENGTH = 43;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const keys = new Map<string, Buffer>();

function keyOf(config: AppConfig): Buffer {
  const id = `${config.quoteLinkSecret ?? ''}\u0000${config.dataDir}`;
  let key = keys.get(id);
  if (!key) {
    mkdirSync(config.dataDir, { recursive: true });
    key = loadKey(config.quoteLinkSecret, config.dataDir, 'QUOTE_LINK_SECRET', QUOTE_LINK_KEY_FILE);
    keys.set(id, key);
  }
  return key;
}

/**
 * The customer's token of a quote: 43 base62 characters (256 bits) of HMAC-SHA256(key, quote id).
 * It is derived, never stored: the quote keeps only its hash, and the e-mail and the `quote.sent`
 * webhook derive the link again. The key is `QUOTE_LINK_SECRET` (at least 32 characters) or one
 * generated once into `DATA_DIR/quote-link.key`; replacing it voids the links of every quote sent
 * since links are derived.
 */
export function quoteToken(config: AppConfig, quoteId: string): string {
  let value = BigInt(`0x${createHmac('sha256', keyOf(config)).update(`quote-link\u0000${quoteId}`).digest('hex')}`);
  let token = '';
  for (let i = 0; i < TOKEN_LENGTH; i++) {
    token = BASE62[Number(value % 62n)] + token;
    value /= 62n;
  }
  return token;
}

/** `{PUBLIC_BASE_URL}/q/{token}`: the page behind the link in the quote e-mail (decisions §6). */
export function quoteLinkUrl(config: AppConfig, quoteId: string): string {
  return `${config.publicBaseUrl}/q/${quoteToken(config, quoteId)}`;
}
