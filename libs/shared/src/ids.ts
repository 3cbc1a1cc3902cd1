import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniformly random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/**
 * Opaque, roughly time-ordered identifiers: `<prefix>_` + 10 chars of time + 14 random chars.
 * Time-ordering keeps index locality; the random part makes ids unguessable.
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = BASE62[t % 62] + time;
    t = Math.floor(t / 62);
  }
  return `${prefix}_${time}${randomBase62(14)}`;
}

/**
 * How long the retry of a keyed request finds what its first attempt made (an id from
 * idFromDigest, a recorded send): the lifetime of an Idempotency-Key (decisions §3, 24 h). The
 * same request made later is a new one, and makes anew.
 */
export const REQUEST_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * The id a keyed request takes: `requestedId` (see idFromDigest), unless what holds it was made
 * REQUEST_RETRY_WINDOW_MS or longer before `now` (the same request made again a day later, which
 * makes anew, under `fresh()`); `madeAt` says when what holds an id was made, null when nothing
 * does. Without a requested id, `fresh()`.
 */
export async function idOfRequest(requestedId: string | undefined, madeAt: (id: string) => Promise<number | null>, now: number, fresh: () => string): Promise<string> {
  if (requestedId === undefined) return fresh();
  const made = await madeAt(requestedId);
  return made !== null && now - made >= REQUEST_RETRY_WINDOW_MS ? fresh() : requestedId;
}

/**
 * An id of the same shape as newId (`<prefix>_` + 24 base62 characters) taken from a digest of at
 * least 24 bytes: the same digest, the same id (what a keyed request creates, on every attempt).
 */
export function idFromDigest(prefix: string, digest: Uint8Array): string {
  if (digest.length < 24) throw new Error('an id needs a digest of 24 bytes or more');
  let out = '';
  for (let i = 0; i < 24; i++) out += BASE62[digest[i] % 62];
  return `${prefix}_${out}`;
}

/** Generates ids; injected so tests and deciders never call a random source themselves. */
export abstract class IdGenerator {
  abstract next(prefix: string): string;
}

export class RandomIdGenerator extends IdGenerator {
  next(prefix: string): string {
    return newId(prefix);
  }
}
