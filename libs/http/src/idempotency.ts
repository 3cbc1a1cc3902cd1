import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './error-envelope.filter';

export interface StoredResponse {
  bodyHash: string;
  status: number;
  /** the serialized response body */
  body: string;
  expiresAt: number;
}

/** Where replayable responses are kept for 24 h. Shared between gateways when scaled out. */
export abstract class IdempotencyStore {
  abstract get(scope: string, key: string, now: number): Promise<StoredResponse | null>;
  abstract put(scope: string, key: string, response: StoredResponse): Promise<void>;
}

export class InMemoryIdempotencyStore extends IdempotencyStore {
  private readonly entries = new Map<string, StoredResponse>();
  async get(scope: string, key: string, now: number) {
    const entry = this.entries.get(`${scope}\u0000${key}`);
    if (!entry || entry.expiresAt <= now) return null;
    return entry;
  }
  async put(scope: string, key: string, response: StoredResponse) {
    const now = response.expiresAt - TTL_MS;
    for (const [k, v] of this.entries) if (v.expiresAt <= now) this.entries.delete(k);
    this.entries.set(`${scope}\u0000${key}`, response);
  }
}

const TTL_MS = 24 * 60 * 60 * 1000;

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { scope: string; key: string; bodyHash: string; release: () => void };
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
 * is 422. Concurrent duplicates wait for the first to finish. 5xx answers are not stored, so a
 * retry after a server error runs again.
 */
export function registerIdempotency(fastify: FastifyInstance, store: IdempotencyStore, now: () => number = Date.now): void {
  const inFlight = new Map<string, Promise<void>>();

  fastify.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'POST') return;
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header[0] : header;
    if (!key || key.length > 255) {
      return reply.status(422).type('application/json').send(
        errorBody('validation_error', 'The request is invalid.', { fields: [{ path: 'Idempotency-Key', message: 'must be 1 to 255 characters' }] }),
      );
    }
    const scope = callerScope(request);
    const lockKey = `${scope}\u0000${key}`;
    while (inFlight.has(lockKey)) await inFlight.get(lockKey);
    const bodyHash = createHash('sha256').update(JSON.stringify(request.body ?? null)).digest('hex');
    const stored = await store.get(scope, key, now());
    if (stored) {
      if (stored.bodyHash !== bodyHash) {
        return reply.status(422).type('application/json').send(
          errorBody('validation_error', 'The request is invalid.', { fields: [{ path: 'Idempotency-Key', message: 'this key was already used with a different request body' }] }),
        );
      }
      return reply.status(stored.status).header('Idempotent-Replayed', 'true').type('application/json').send(stored.body);
    }
    let release!: () => void;
    inFlight.set(lockKey, new Promise<void>((resolve) => (release = resolve)));
    request.idempotency = {
      scope,
      key,
      bodyHash,
      release: () => {
        inFlight.delete(lockKey);
        release();
      },
    };
  });

  fastify.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const pending = request.idempotency;
    if (!pending) return payload;
    try {
      if (reply.statusCode < 500 && typeof payload === 'string') {
        await store.put(pending.scope, pending.key, { bodyHash: pending.bodyHash, status: reply.statusCode, body: payload, expiresAt: now() + TTL_MS });
      }
    } finally {
      request.idempotency = undefined;
      pending.release();
    }
    return payload;
  });

  fastify.addHook('onResponse', async (request: FastifyRequest) => {
    request.idempotency?.release();
  });
}
