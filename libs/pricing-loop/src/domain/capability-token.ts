import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const CAPABILITY_TOKEN_PREFIX = 'pct_';
/** `pct_` + base64url of a 32-byte HMAC-SHA256 (43 characters, no padding). */
const CAPABILITY_TOKEN = /^pct_[A-Za-z0-9_-]{43}$/;

/** Derivation needs at least this much key material. */
export const MIN_KEY_BYTES = 32;

/**
 * decisions §8 capability tokens. A token is derived, never stored: HMAC-SHA256 under the
 * service's pricing-token key of `<deliveryId>:<generation>`. Every attempt of one delivery
 * generation therefore carries the same token, a redelivery (the next generation) a new one, and
 * only the token's SHA-256 is ever recorded.
 */
export class CapabilityTokens {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length < MIN_KEY_BYTES) throw new RangeError(`a pricing token key needs at least ${MIN_KEY_BYTES} bytes`);
    this.key = Buffer.from(key);
  }

  derive(deliveryId: string, generation: number): string {
    return CAPABILITY_TOKEN_PREFIX + createHmac('sha256', this.key).update(`${deliveryId}:${generation}`, 'utf8').digest('base64url');
  }

  /** Whether `token` is the one this key derives for the delivery generation (constant time; malformed never matches). */
  matches(token: string, deliveryId: string, generation: number): boolean {
    if (!isWellFormedCapabilityToken(token)) return false;
    const expected = Buffer.from(this.derive(deliveryId, generation), 'utf8');
    const actual = Buffer.from(token, 'utf8');
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  }
}

export function isWellFormedCapabilityToken(token: string): boolean {
  return CAPABILITY_TOKEN.test(token);
}

/** What is recorded and looked up instead of the token: hex SHA-256. */
export function hashCapabilityToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
