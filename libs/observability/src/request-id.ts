import { randomUUID } from 'node:crypto';
import { redactText } from './redaction';

export const REQUEST_ID_HEADER = 'x-request-id';
const MAX_LENGTH = 128;
/** Printable, header- and log-safe: no spaces, quotes or control characters. */
const ACCEPTED = /^[A-Za-z0-9._:@\/+=-]+$/;

/**
 * The caller's X-Request-Id when it is acceptable, else a new UUID. Acceptable: bounded, plain
 * characters, and nothing the log scrubber would hide (a key, token or secret sent as the id by
 * mistake): the id is logged and echoed as it is, never redacted.
 */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  if (value && value.length <= MAX_LENGTH && ACCEPTED.test(value) && redactText(value) === value) return value;
  return randomUUID();
}
