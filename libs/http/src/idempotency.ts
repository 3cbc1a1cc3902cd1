import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson } from '@lib/shared';
import { errorBody } from './error-envelope.filter';

export interface StoredResponse {
  bodyHash: string;
  status: number;
  /** the serialized response body */
  body: string;
  /** the response's ETag, replayed with it (quote writes answer with one) */
  etag?: string;
  expiresAt: number;
}

/** A request running under an idempotency key, until its response is stored or it is released. */
export interface IdempotencyClaim {
  /** the request holding the claim */
  owner: string;
  /** Unix ms after which the claim lapses, so a gateway that died mid-request does not block the key for good */
  until: number;
}

/**
 * Where replayable responses are kept for 24 h, and which request is running under a key right
 * now. Shared between gateways when scaled out, so a duplicate sent to another instance waits for
 * the first instead of running again.
 */
export abstract class IdempotencyStore {
  /** The stored response, if one is stored and not expired. */
  abstract get(scope: string, key: string, now: number): Promise<StoredResponse | null>;
  /** Stores the response; it replaces the claim of the request that produced it. */
  abstract put(scope: string, key: string, response: StoredResponse): Promise<void>;
  /** Takes the key for a request about to run: false while another request holds an unexpired claim or a response is stored. */
  abstract claim(scope: string, key: string, claim: IdempotencyClaim, now: number): Promise<boolean>;
  /** Gives up a claim without a stored response (a 5xx answer), so a retry runs again. */
  abstract release(scope: string, key: string, owner: string): Promise<void>;
}

export class InMemoryIdempotencyStore extends IdempotencyStore {
  private readonly entries = new Map<string, StoredResponse>();
  private readonly claims = new Map<string, IdempotencyClaim>();

  async get(scope: string, key: string, now: number) {
    const entry = this.entries.get(`${scope}\u0000${key}`);
    if (!entry || entry.expiresAt <= now) return null;
    return entry;
  }

  async put(scope: string, key: string, response: StoredResponse) {
    const now = response.expiresAt - TTL_MS;
    for (const [k, v] of this.entries) if (v.expiresAt <= now) this.entries.delete(k);
    this.entries.set(`${scope}\u0000${key}`, response);
    this.claims.delete(`${scope}\u0000${key}`);
  }

  async claim(scope: string, key: string, claim: IdempotencyClaim, now: number) {
    const id = `${scope}\u0000${key}`;
    const held = this.claims.get(id);
    if ((held && held.until > now) || (await this.get(scope, key, now))) return false;
    this.claims.set(id, claim);
    return true;
  }

  async release(scope: string, key: string, owner: string) {
    const id = `${scope}\u0000${key}`;
    if (this.claims.get(id)?.owner === owner) this.claims.delete(id);
  }
}

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const TTL_MS = IDEMPOTENCY_TTL_MS;
/**
 * How long a claim holds a key. A duplicate on another gateway waits at most this long for the
 * first request; longer than any request runs, short enough that a gateway that died mid-request
 * frees the key soon.
 */
export const IDEMPOTENCY_CLAIM_MS = 60_000;
/** How often a duplicate checks whether the request on another gateway has finished. */
const CLAIM_POLL_MS = 25;

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { scope: string; key: string; bodyHash: string; release: () => Promise<void> };
  }
}

function callerScope(request: FastifyRequest): string {
  const caller = request.caller;
  const who = caller?.kind === 'apiKey' ? `org:${caller.organizationId}` : caller?.kind === 'admin' ? 'admin' : `ip:${request.ip}`;
  return `${who} POST ${request.url}`;
}

/**
 * `Idempotency-Key` on POST (decisions §3): the same key with the same body replays the first
 * response (status and body, with `Idempotent-Replayed: true`); the same key with another body
 * is 422. Concurrent duplicates wait for the first to finish: in this process on a promise, across
 * gateways on the store's claim. 5xx answers are not stored, so a retry after a server error runs
 * again.
 */
export function registerIdempotency(fastify: FastifyInstance, store: IdempotencyStore, now: () => number = Date.now): void {
  const inFlight = new Map<string, Promise<void>>();

  // The three hooks run for every request, nearly all without a key: they take `done` rather than
  // being async, so those requests pay no promise and microtask turn for them.
  fastify.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    if (request.method !== 'POST' || request.headers['idempotency-key'] === undefined) return done();
    // A request answered here (a replay, a refused key) goes no further.
    claimKey(request, reply).then(() => reply.sent || done(), done);
  });

  const claimKey = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const header = request.headers['idempotency-key']!;
    const key = Array.isArray(header) ? header[0] : header;
    if (!key || key.length > 255) {
      return reply.status(422).type('application/json').send(
        errorBody('validation_error', 'The request is invalid.', { fields: [{ path: 'Idempotency-Key', message: 'must be 1 to 255 characters' }] }),
      );
    }
    const scope = callerScope(request);
    const lockKey = `${scope}\u0000${key}`;
    for (let pending = inFlight.get(lockKey); pending; pending = inFlight.get(lockKey)) await pending;
    // Taken before the first await below, so a duplicate in this process waits on it.
    let unlock!: () => void;
    inFlight.set(lockKey, new Promise<void>((resolve) => (unlock = resolve)));
    const owner = randomUUID();
    let claimed = false;
    let released = false;
    const release = async (): Promise<void> => {
      if (released) return;
      released = true;
      try {
        if (claimed) await store.release(scope, key, owner);
      } finally {
        inFlight.delete(lockKey);
        unlock();
      }
    };
    const bodyHash = createHash('sha256').update(bodyFingerprint(request.body)).digest('hex');
    try {
      for (;;) {
        const stored = await store.get(scope, key, now());
        if (stored) {
          await release();
          if (stored.bodyHash !== bodyHash) {
            return reply.status(422).type('application/json').send(
              errorBody('validation_error', 'The request is invalid.', { fields: [{ path: 'Idempotency-Key', message: 'this key was already used with a different request body' }] }),
            );
          }
          if (stored.etag) reply.header('ETag', stored.etag);
          return reply.status(stored.status).header('Idempotent-Replayed', 'true').type('application/json').send(stored.body);
        }
        // Another gateway may be running the first request: wait until it stores its response or its claim lapses.
        if (await store.claim(scope, key, { owner, until: now() + IDEMPOTENCY_CLAIM_MS }, now())) break;
        await sleep(CLAIM_POLL_MS);
      }
      claimed = true;
    } catch (error) {
      await release();
      throw error;
    }
    request.idempotency = { scope, key, bodyHash, release };
    return undefined;
  };

  fastify.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
    const pending = request.idempotency;
    if (!pending) return done(null, payload);
    request.idempotency = undefined;
    const stored = async () => {
      try {
        if (reply.statusCode < 500 && typeof payload === 'string') {
          const etag = reply.getHeader('etag');
          await store.put(pending.scope, pending.key, { bodyHash: pending.bodyHash, status: reply.statusCode, body: payload, ...(typeof etag === 'string' ? { etag } : {}), expiresAt: now() + TTL_MS });
        }
      } finally {
        await pending.release();
      }
    };
    stored().then(() => done(null, payload), done);
  });

  fastify.addHook('onResponse', (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const pending = request.idempotency;
    if (!pending) return done();
    pending.release().then(() => done(), done);
  });
}

/**
 * The same JSON is the same body, whatever its member order or spacing: its RFC 8785 canonical
 * form. A number JSON.parse read as Infinity (`1e400`) has none; such a body is refused by
 * validation anyway, and is told apart by its plain serialization meanwhile.
 */
function bodyFingerprint(body: unknown): string {
  try {
    return canonicalJson(body ?? null);
  } catch {
    return JSON.stringify(body ?? null);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
