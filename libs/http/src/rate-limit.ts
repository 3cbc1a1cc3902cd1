import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerTokenOf, CredentialResolver, repeatedAuthorization, REPEATED_AUTHORIZATION, type ApiKeyIdentity } from './auth';
import { errorBody, replyWithError } from './error-envelope.filter';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** seconds until the window resets */
  resetSeconds: number;
}

/** Fixed one-minute windows per bucket. In-memory here; a shared store backs it when scaled out. */
export abstract class RateLimiter {
  /** Counts a hit; a limiter that keeps its counts in memory answers without a promise. */
  abstract hit(bucket: string, limitPerMinute: number, now: number): RateDecision | Promise<RateDecision>;
}

export class InMemoryRateLimiter extends RateLimiter {
  private readonly windows = new Map<string, { windowStart: number; count: number }>();
  private lastSweep = 0;

  hit(bucket: string, limit: number, now: number): RateDecision {
    const windowStart = now - (now % 60_000);
    if (windowStart !== this.lastSweep) {
      for (const [key, w] of this.windows) if (w.windowStart < windowStart) this.windows.delete(key);
      this.lastSweep = windowStart;
    }
    const current = this.windows.get(bucket);
    const entry = current && current.windowStart === windowStart ? current : { windowStart, count: 0 };
    entry.count++;
    this.windows.set(bucket, entry);
    const resetSeconds = Math.max(1, Math.ceil((windowStart + 60_000 - now) / 1000));
    return { allowed: entry.count <= limit, limit, remaining: Math.max(0, limit - entry.count), resetSeconds };
  }
}

export interface RateLimits {
  ipPerMinute: number;
  keyPerMinute: number;
  capabilityPerMinute: number;
}

/** The RateLimit-* headers of a counted hit (decisions §3), lower-cased as they are sent, in this order. */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    'ratelimit-limit': String(decision.limit),
    'ratelimit-remaining': String(decision.remaining),
    'ratelimit-reset': String(decision.resetSeconds),
  };
}

/** The bucket of an API key's requests. */
export const keyBucket = (keyId: string) => `key:${keyId}`;

/** Capability URLs: the live-pricing session endpoints and the customer's storefront links. */
const CAPABILITY_PATH = /^\/(api\/v1\/configuration-sessions|storefront\/v1\/sessions|storefront\/v1\/quotes|q)\//;

/** Health, readiness and metrics endpoints (outside the APIs, no credentials). */
export const OPERATIONS_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** The customer pages' scripts and stylesheet (libs/web). */
const STATIC_ASSETS = '/assets/';

/**
 * Resolves the caller once per request and applies the rate limits of api-v1 (Limits):
 * requests with a valid API key count against that key; capability URLs count per IP at their
 * own rate; everything else unauthenticated (including failed authentication) counts per IP.
 * Calls with the admin token count against it at the API-key rate. Every response of the APIs
 * carries the RateLimit-* headers of its bucket (none while that limit is turned off).
 */
export function registerRequestAuthentication(
  fastify: FastifyInstance,
  resolver: CredentialResolver,
  limiter: RateLimiter,
  limits: () => RateLimits,
  now: () => number = Date.now,
): void {
  type Done = (error?: Error) => void;

  const limit = (request: FastifyRequest, reply: FastifyReply, path: string, done: Done): void => {
    const { ipPerMinute, keyPerMinute, capabilityPerMinute } = limits();
    const caller = request.caller!;
    let bucket: string;
    let perMinute: number;
    if (caller.kind === 'apiKey') {
      bucket = keyBucket(caller.keyId);
      perMinute = keyPerMinute;
    } else if (caller.kind === 'admin') {
      // The admin token is the operator's key: limited like an API key, in a bucket of its own.
      bucket = 'admin';
      perMinute = keyPerMinute;
    } else if (CAPABILITY_PATH.test(path)) {
      bucket = `cap:${request.ip}`;
      perMinute = capabilityPerMinute;
    } else {
      bucket = `ip:${request.ip}`;
      perMinute = ipPerMinute;
    }
    if (perMinute <= 0) return done();
    const decision = limiter.hit(bucket, perMinute, now());
    if (decision instanceof Promise) decision.then((decided) => answer(reply, decided, done), done);
    else answer(reply, decision, done);
  };

  const answer = (reply: FastifyReply, decision: RateDecision, done: Done): void => {
    reply.headers(rateLimitHeaders(decision));
    if (decision.allowed) return done();
    reply.header('Retry-After', String(decision.resetSeconds));
    reply.status(429).type('application/json').send(errorBody('rate_limited', `Rate limit of ${decision.limit} requests per minute exceeded; retry after ${decision.resetSeconds} s.`));
  };

  // With `done` rather than async, and synchronous while the key's resolution is kept and the
  // limiter counts in memory: every request runs it.
  const authenticate = (request: FastifyRequest, reply: FastifyReply, done: Done): void => {
    const path = targetPath(request.url);
    // Probes and scrapes come often and from the platform, never from a client: not limited. Nor
    // are the customer pages' static files: a page load took three of the 60 per IP and minute,
    // so six loads from one office or carrier NAT left the page an unstyled "Loading…" for good
    // (found by a review); they are answered from memory, and the API calls they make still count.
    if (OPERATIONS_PATHS.has(path) || path.startsWith(STATIC_ASSETS)) return done();
    // One look at the raw headers per request: two Authorization headers name no caller.
    const repeated = repeatedAuthorization(request.raw);
    const token = repeated ? null : bearerTokenOf(request.headers.authorization);
    request.caller = repeated ? { kind: 'anonymous', problem: REPEATED_AUTHORIZATION } : { kind: 'anonymous' };
    if (token && path.startsWith('/admin/') && resolver.isAdminToken(token)) {
      request.caller = { kind: 'admin' };
      return limit(request, reply, path, done);
    }
    if (!token || !path.startsWith('/api/')) return limit(request, reply, path, done);
    const identify = (identity: ApiKeyIdentity | null) => {
      if (identity) request.caller = { kind: 'apiKey', ...identity };
      limit(request, reply, path, done);
    };
    const identity = resolver.resolveApiKey(token);
    if (!(identity instanceof Promise)) return identify(identity);
    // Outside Fastify's own try/catch here: an error must still end the request.
    identity.then((resolved) => {
      try {
        identify(resolved);
      } catch (error) {
        done(error as Error);
      }
    }, done);
  };
  fastify.addHook('onRequest', authenticate);
  // Requests Fastify answers before any hook (a path it cannot decode or route) are counted too.
  fastify.decorate(FRAMEWORK_ERROR_GATE, authenticate);
}

const FRAMEWORK_ERROR_GATE = 'authenticateFrameworkError';

/**
 * Runs the authentication and rate limit of every request for one that Fastify answers itself,
 * before its hooks (`frameworkErrors`): `answer` runs when the request may be answered, with the
 * RateLimit-* headers set; over the limit the gate answers 429 itself. Without a gate (the adapter
 * is used without configureHttpApplication) `answer` runs at once.
 */
export function throughRateLimit(request: FastifyRequest, reply: FastifyReply, answer: () => void): void {
  const gate = (request.server as unknown as Record<string, unknown>)?.[FRAMEWORK_ERROR_GATE] as
    | ((request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void)
    | undefined;
  if (!gate) return answer();
  gate(request, reply, (error) => (error ? replyWithError(reply, error) : answer()));
}

/**
 * The path of a request target, an absolute-form one too (`GET http://host/api/v1/… HTTP/1.1`,
 * which RFC 9112 has servers accept and the router routes by its path). Until 2026-11-27 such a
 * request was taken for anonymous and refused 401 with a valid key (found by a security review).
 */
export function targetPath(url: string): string {
  const path = url.split('?', 1)[0];
  return path.startsWith('/') ? path : path.replace(/^https?:\/\/[^/]*/i, '');
}
