import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '@lib/shared';

export const CUSTOMER_TOKEN_PREFIX = 'cst_';
const CUSTOMER_TOKEN = /^cst_[0-9A-Za-z]{40}$/;

/** A fresh secret for the customer of one session: shown once, in the response that starts the session. */
export function generateCustomerToken(): string {
  return CUSTOMER_TOKEN_PREFIX + randomBase62(40);
}

/** The token is stored only as this hash. */
export function hashCustomerToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Whether a presented value could be a customer token at all (checked before any lookup). */
export function isCustomerTokenShaped(presented: string): boolean {
  return CUSTOMER_TOKEN.test(presented);
}

/** Compares a presented token with the stored hash in constant time (the caller checked its shape first). */
export function customerTokenMatches(presented: string, storedHash: string): boolean {
  const expected = Buffer.from(storedHash, 'hex');
  const actual = Buffer.from(hashCustomerToken(presented), 'hex');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
