import { createHash, randomUUID } from 'node:crypto';
import { SetMetadata, type CanActivate, type ExecutionContext, type Type } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isObservable, lastValueFrom } from 'rxjs';
import { canonicalJson, idFromDigest, REQUEST_RETRY_WINDOW_MS } from '@lib/shared';
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
  /** Gives up a claim without a stored response (an answer that is not kept), so a retry runs again. */
  abstract release(scope: string, key: string, owner: string): Promise<void>;
  /** Moves the lapse of the owner's claim to `until`, while it still holds the key; nothing otherwise. */
  abstract renew(scope: string, key: string, owner: string, until: number): Promise<void>;
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

  async renew(scope: string, key: string, owner: string, until: number) {
    const held = this.claims.get(`${scope}\u0000${key}`);
    if (held?.owner === owner) held.until = until;
  }
}

export const IDEMPOTENCY_TTL_MS = REQUEST_RETRY_WINDOW_MS;
const TTL_MS = IDEMPOTENCY_TTL_MS;
/**
 * How long a claim holds a key unless it is renewed: the request holding it renews it every
 * IDEMPOTENCY_RENEW_MS while it runs, however long that is. A retry after the gateway died
 * mid-request (its claim no longer renewed) waits at most this long. Until 2026-11-27 a claim
 * held 60 s and was never renewed, so such a retry hung for a minute (found by a review).
 */
export const IDEMPOTENCY_CLAIM_MS = 15_000;
/** How often a running request renews its claim: a third of its lapse, so two renewals may fail before it lapses. */
export const IDEMPOTENCY_RENEW_MS = 5_000;
/** How often a duplicate checks whether the request on another gateway has finished. */
const CLAIM_POLL_MS = 25;

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: {
      scope: string;
      key: string;
      bodyHash: string;
      release: () => Promise<void>;
      /** where the answer may show a secret the kept answer leaves out (KeptWithoutSecret) */
      keptWithout?: readonly string[];
    };
  }
}

function callerScope(request: FastifyRequest): string {
  const caller = request.caller;
  const who = caller?.kind === 'apiKey' ? `org:${caller.organizationId}` : caller?.kind === 'admin' ? 'admin' : `ip:${request.ip}`;
  return `${who} POST ${canonicalPath(request)}`;
}

/**
 * The path of the resource the request is for, as the router read it: its route with each
 * parameter as decoded and then encoded one way, and no query string (no POST reads one). The raw
 * URL would make `/quotes/q_1/send?`, `/quotes/q_1/send?retry=1` and `/quotes/q%5F1/send` three
 * scopes, and a retry sent so would send the quote again. A path without a query, escapes or a
 * credential is its own canonical path, so keys stored by earlier versions still match.
 */
export function canonicalPath(request: Pick<FastifyRequest, 'url' | 'params'> & { routeOptions: { url?: string } }): string {
  const route = request.routeOptions.url;
  if (route === undefined) return request.url.split('?')[0];
  const params = (request.params ?? {}) as Record<string, string>;
  return route.replace(/:([A-Za-z0-9_]+)|\*/g, (_match, name: string | undefined) => {
    if (name === undefined) return encodeURI(params['*'] ?? '');
    const value = params[name] ?? '';
    return CREDENTIAL_PARAMS.has(name) ? `~${createHash('sha256').update(value).digest('base64url')}` : encodeURIComponent(value);
  });
}

/**
 * Route parameters that are credentials (the token of a customer's quote link, of a capability
 * URL): the scope, which the store keeps for 24 h, holds their SHA-256 instead, as every other
 * store does (found when the quote page began to send its answer under a key, 2026-11-27).
 */
const CREDENTIAL_PARAMS = new Set(['quoteToken', 'token']);

/**
 * The id of what a keyed request creates, the same on every attempt of that request (its caller,
 * resource, key and body); undefined without a key. A retry after a crash that lost the first
 * answer (the write was made, its answer never stored under the key) then finds what the first
 * attempt made instead of making it again: the command answers with it as if it had just made it.
 * Only within REQUEST_RETRY_WINDOW_MS of the first attempt: the same request later makes anew,
 * under a new id (the commands check the age of what they find).
 */
export function idempotentId(request: FastifyRequest, prefix: string): string | undefined {
  const pending = request.idempotency;
  if (!pending) return undefined;
  return idFromDigest(prefix, createHash('sha256').update(`${prefix}\u0000${pending.scope}\u0000${pending.key}\u0000${pending.bodyHash}`).digest());
}

/** A POST with an `Idempotency-Key` header: the only requests the key step looks at. */
export function carriesIdempotencyKey(request: FastifyRequest): boolean {
  return request.method === 'POST' && request.headers['idempotency-key'] !== undefined;
}

/**
 * Whether an answer is kept for the key. Not kept, so that a retry with the same key runs the
 * request again: refused credentials or permissions (401, 403: a caller allowed to make the
 * request must not receive them), a rate limit (429), a concurrency conflict that says "retry the
 * request" (409 `conflict`) and server errors (5xx), except the 503 of a write that is stored but
 * not yet readable (`details.writeStored`): running that again would make the write twice. Every
 * other answer is the request's outcome.
 */
function isKept(status: number, payload: string): boolean {
  if (status === 503) return errorOf(payload)?.details?.writeStored === true;
  if (status >= 500 || status === 401 || status === 403 || status === 429) return false;
  return status !== 409 || errorOf(payload)?.code !== 'conflict';
}

function errorOf(payload: string): { code?: unknown; details?: { writeStored?: unknown } } | undefined {
  try {
    return (JSON.parse(payload) as { error?: { code?: unknown; details?: { writeStored?: unknown } } } | null)?.error;
  } catch {
    return undefined;
  }
}

/** The request's key; null when it is not 1 to 255 characters, after answering 422 (the header's documented rule, on every POST). */
function validKey(request: FastifyRequest, reply: FastifyReply): string | null {
  const header = request.headers['idempotency-key']!;
  const key = Array.isArray(header) ? header[0] : header;
  if (key && key.length <= 255) return key;
  reply.status(422).type('application/json').send(
    errorBody('validation_error', 'The request is invalid.', { fields: [{ path: 'Idempotency-Key', message: 'must be 1 to 255 characters' }] }),
  );
  return null;
}

/**
 * Replays the stored answer to the request's key, refuses a key it cannot take (422), or claims
 * the key for the request; resolves true when it answered the request itself. Runs once the
 * request is authenticated and authorized (IdempotencyGuard), so a caller that may not make
 * the request is refused on its own and never receives another caller's stored answer.
 */
export type ReplayOrClaim = (request: FastifyRequest, reply: FastifyReply) => Promise<boolean>;

/**
 * `Idempotency-Key` on POST (decisions §3): the same key with the same body replays the first
 * response (status and body, with `Idempotent-Replayed: true`); the same key with another body
 * is 422. Concurrent duplicates wait for the first to finish: in this process on a promise, across
 * gateways on the store's claim. Answers a retry must not get again (isKept) are not stored.
 * Registers the hooks that store the answer of a claimed request; the returned step replays or
 * claims, and the application runs it after authorization.
 */
export function registerIdempotency(fastify: FastifyInstance, store: IdempotencyStore, now: () => number = Date.now, renewEveryMs = IDEMPOTENCY_RENEW_MS): ReplayOrClaim {
  const inFlight = new Map<string, Promise<void>>();

  const replayOrClaim = async (request: FastifyRequest, reply: FastifyReply): Promise<boolean> => {
    const key = validKey(request, reply);
    if (key === null) return true;
    const scope = callerScope(request);
    const lockKey = `${scope}\u0000${key}`;
    for (let pending = inFlight.get(lockKey); pending; pending = inFlight.get(lockKey)) await pending;
    // Taken before the first await below, so a duplicate in this process waits on it.
    let unlock!: () => void;
    inFlight.set(lockKey, new Promise<void>((resolve) => (unlock = resolve)));
    const owner = randomUUID();
    let claimed = false;
    let released = false;
    let renewal: NodeJS.Timeout | undefined;
    const release = async (): Promise<void> => {
      if (released) return;
      released = true;
      clearInterval(renewal);
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
            reply.status(422).type('application/json').send(
              errorBody('validation_error', 'The request is invalid.', { fields: [{ path: 'Idempotency-Key', message: 'this key was already used with a different request body' }] }),
            );
            return true;
          }
          if (stored.etag) reply.header('ETag', stored.etag);
          // A kept 503 (a write stored while the read side lags) says when to look again, as every 503 does.
          if (stored.status === 503) reply.header('Retry-After', '1');
          reply.status(stored.status).header('Idempotent-Replayed', 'true').type('application/json').send(stored.body);
          return true;
        }
        // Another gateway may be running the first request: wait until it stores its response or its claim lapses.
        if (await store.claim(scope, key, { owner, until: now() + IDEMPOTENCY_CLAIM_MS }, now())) break;
        await sleep(CLAIM_POLL_MS);
      }
      claimed = true;
      renewal = setInterval(() => {
        store.renew(scope, key, owner, now() + IDEMPOTENCY_CLAIM_MS).catch((error: unknown) => request.log.warn({ err: error }, 'the claim of an Idempotency-Key could not be renewed'));
      }, renewEveryMs);
      renewal.unref();
    } catch (error) {
      await release();
      throw error;
    }
    request.idempotency = { scope, key, bodyHash, release };
    return false;
  };

  // The two hooks run for every request, nearly all without a claim: they take `done` rather than
  // being async, so those requests pay no promise and microtask turn for them.
  fastify.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
    const pending = request.idempotency;
    if (!pending) return done(null, payload);
    request.idempotency = undefined;
    const stored = async () => {
      try {
        if (typeof payload === 'string' && isKept(reply.statusCode, payload)) {
          const etag = reply.getHeader('etag');
          const body = pending.keptWithout ? withoutMember(payload, pending.keptWithout) : payload;
          await store.put(pending.scope, pending.key, { bodyHash: pending.bodyHash, status: reply.statusCode, body, ...(typeof etag === 'string' ? { etag } : {}), expiresAt: now() + TTL_MS });
        }
      } catch (error) {
        // The request's outcome stands (a write is made): answering 500 instead would invite the
        // retry that runs it again. Only the replay is lost.
        request.log.error({ err: error }, 'the answer could not be stored under its Idempotency-Key');
      } finally {
        await pending.release().catch((error: unknown) => request.log.error({ err: error }, 'the claim of an Idempotency-Key could not be released; it lapses on its own'));
      }
    };
    stored().then(() => done(null, payload), done);
  });

  fastify.addHook('onResponse', (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const pending = request.idempotency;
    if (!pending) return done();
    pending.release().then(() => done(), done);
  });

  return replayOrClaim;
}

/** A guard of a route, as `@UseGuards` names it: its class, or an instance. */
type RouteGuard = Type<CanActivate> | CanActivate;

const SHOWS_SECRET_ONCE = 'idempotency:showsSecretOnce';

/**
 * The route answers with a secret that is of no use without it (the customer token of a new
 * configuration session). Its answer is never stored under an Idempotency-Key, which would keep
 * the secret in clear text for 24 h and show it again, and an answer without it would be useless:
 * the header is checked as on every POST (1 to 255 characters) and then ignored, and a retry
 * makes another. Routes whose answer is of use without the secret use KeptWithoutSecret.
 */
export const ShowsSecretOnce = () => SetMetadata(SHOWS_SECRET_ONCE, true);

const KEPT_WITHOUT_SECRET = 'idempotency:keptWithoutSecret';

/**
 * The answer may show, at `path`, a secret that is shown exactly once (an API key, a signing
 * secret: api-v1 Authentication 2, decisions §2 and §4). The answer is kept and replayed like any
 * other (a retry makes no second key, rotation or organization), but the kept answer leaves the
 * secret out: the store never holds it, and a replay shows the rest and never the secret.
 */
export const KeptWithoutSecret = (path: readonly string[]) => SetMetadata(KEPT_WITHOUT_SECRET, path);

/** The serialized answer without the member at `path`; as it is when it is not a JSON object. */
function withoutMember(payload: string, path: readonly string[]): string {
  let answer: unknown;
  try {
    answer = JSON.parse(payload);
  } catch {
    return payload;
  }
  let parent = answer;
  for (const name of path.slice(0, -1)) parent = typeof parent === 'object' && parent !== null ? (parent as Record<string, unknown>)[name] : undefined;
  if (typeof parent !== 'object' || parent === null) return payload;
  delete (parent as Record<string, unknown>)[path.at(-1)!];
  return JSON.stringify(answer);
}

/**
 * The key step of a POST, run once the request is authenticated and authorized: a caller that may
 * not make the request (no key, 401; a read-only key, 403 `read_only_key`; …) is refused as its
 * route's guards refuse it, never answered with a stored response, and that refusal is not stored.
 *
 * A global guard, registered after any other global guard: Nest runs global guards before the
 * route's own (`@UseGuards` on the controller and the handler), so for a request with a key it
 * runs those first itself; Nest then runs them again, which costs a keyed POST one more check.
 * Not an interceptor, which would run after them: a global interceptor cost every request of
 * every route, keyed or not, about 150 µs on Node 20 (measured: docs/decisions/platform.md). Body
 * validation comes after this step, so a 422 of the body is kept and replayed like any other answer.
 */
export class IdempotencyGuard implements CanActivate {
  /** the route guards' instances, per controller class and handler */
  private readonly guards = new WeakMap<object, WeakMap<object, CanActivate[]>>();

  /** `instanceOf` gives the application's instance of a guard class (NestApplication.get). */
  constructor(
    private readonly replayOrClaim: ReplayOrClaim,
    private readonly instanceOf: (guard: Type<CanActivate>) => CanActivate,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // Without a key: true at once, no promise, as nearly every request goes through here.
    if (!carriesIdempotencyKey(request)) return true;
    return this.keyStep(context, request);
  }

  private async keyStep(context: ExecutionContext, request: FastifyRequest): Promise<boolean> {
    // A guard that refuses throws its error (the answer Nest gives too); one that answers false
    // is left to Nest, which runs it next and refuses the request.
    for (const guard of this.routeGuards(context)) {
      const allowed = guard.canActivate(context);
      if (!(await (isObservable(allowed) ? lastValueFrom(allowed) : allowed))) return true;
    }
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    // A secret shown once is never stored: the header is checked like everywhere, then ignored.
    if (Reflect.getMetadata(SHOWS_SECRET_ONCE, context.getHandler()) === true) {
      if (validKey(request, reply) !== null) return true;
    } else if (!(await this.replayOrClaim(request, reply))) {
      const keptWithout = Reflect.getMetadata(KEPT_WITHOUT_SECRET, context.getHandler()) as readonly string[] | undefined;
      if (keptWithout) request.idempotency!.keptWithout = keptWithout;
      return true;
    }
    // Answered (a replay, a refused key): the handler must not run, and Nest must not answer
    // after it. A promise that never settles stops the request here; nothing holds it once the
    // request is over, so it is collected with it.
    return new Promise<boolean>(() => undefined);
  }

  /** The guards Nest runs for the route after the global ones: the controller's, then the handler's. */
  private routeGuards(context: ExecutionContext): CanActivate[] {
    const controller = context.getClass();
    const handler = context.getHandler();
    let ofController = this.guards.get(controller);
    if (ofController === undefined) this.guards.set(controller, (ofController = new WeakMap()));
    let guards = ofController.get(handler);
    if (guards === undefined) {
      const declared: RouteGuard[] = [...(Reflect.getMetadata(GUARDS_METADATA, controller) ?? []), ...(Reflect.getMetadata(GUARDS_METADATA, handler) ?? [])];
      guards = declared.map((guard) => (typeof guard === 'function' ? this.instanceOf(guard) : guard));
      ofController.set(handler, guards);
    }
    return guards;
  }
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
