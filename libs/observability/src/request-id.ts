import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';
const MAX_LENGTH = 128;
/** Printable, header- and log-safe: no spaces, quotes or control characters. */
const ACCEPTED = /^[A-Za-z0-9._:@\/+=-]+$/;

/** The caller's X-Request-Id when it is acceptable (bounded, plain characters), else a new UUID. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  if (value && value.length <= MAX_LENGTH && ACCEPTED.test(value)) return value;
  return randomUUID();
}
