import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Unavailable, ValidationFailed } from '@lib/shared';
import { adminRefusal, apiKeyRefusal, CredentialResolver } from './auth';
import { BeforeBodyChecks } from './before-body';
import { duplicateKeyPaths, forbiddenKeyPaths, registerBodyShapeChecks } from './body-depth';
import { ErrorEnvelopeFilter, errorBody, replyWithError } from './error-envelope.filter';
import { IdempotencyGuard, IdempotencyStore, registerIdempotency } from './idempotency';
import { EarlyListAnswers, ListResponses, type EarlyListAnswerServices } from './list-responses';
import { InMemoryRateLimiter, keyBucket, RateLimiter, registerRequestAuthentication, throughRateLimit, type RateLimits } from './rate-limit';
import { createValidationPipe } from './validation';
import { WriteGate } from './write-gate';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** The external API's routes, all behind ApiKeyGuard except the capability-URL session endpoints. */
const API_KEY_ROUTES = '/api/v1/';
const CAPABILITY_ROUTES = '/api/v1/configuration-sessions/';
const ADMIN_ROUTES = '/admin/v1/';
/**
 * Routes whose answers belong to the holder of a capability URL or a customer token (a partner's
 * pricing callback, the customer's session and quote, the answer that shows a new customer
 * token), and the admin API (its answers show new API keys and signing secrets): no cache keeps
 * them and no Referer carries their address (2026-11-26, found by reviews).
 */
const PRIVATE_ROUTES = [CAPABILITY_ROUTES, '/storefront/v1/sessions/', '/storefront/v1/quotes/', '/storefront/v1/:orgSlug/sessions', '/admin/v1/'];
/**
 * API answers that hold a bearer link: a quote's `pdf.url` opens its PDF for 5 minutes without a
 * key. Not kept either (2026-11-27, found by a security review); other API answers are the
 * caller's data behind its key, which shared caches do not keep.
 */
const PRIVATE_API_ROUTES = new Set(['/api/v1/quotes/:quoteId']);

/** Fastify's defaults for its own HTTP server, which a server factory has to set itself. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * Requests Fastify answers itself, before any hook runs: a path it cannot decode (bad
 * percent-encoding) or route (a parameter over maxParamLength). Its hooks neither log nor count
 * them, so whoever logs and counts the others watches these here. Until 2026-11-27 they left no
 * trace at all, so probing with malformed URLs went unseen (found by a review).
 */
export class UnroutedAnswers {
  private readonly observers: Array<(request: FastifyRequest, reply: FastifyReply) => void> = [];

  /** `observe` is called with each such request once its answer is sent. */
  observe(observe: (request: FastifyRequest, reply: FastifyReply) => void): void {
    this.observers.push(observe);
  }

  watch(request: FastifyRequest, reply: FastifyReply): void {
    if (this.observers.length > 0) reply.raw.once('close', () => this.observers.forEach((observe) => observe(request, reply)));
  }
}

/**
 * `genReqId`: the id of each request (X-Request-Id), from the raw request. `early`: requests it
 * answers as they arrive never reach Fastify (see EarlyListAnswers). `unrouted`: requests Fastify
 * answers before its hooks, to be logged and counted. `trustProxy`: which proxies may name the
 * client in X-Forwarded-For (TRUST_PROXY, as Fastify takes it).
 */
export function createHttpAdapter(
  options: { genReqId?: (raw: IncomingMessage) => string; early?: EarlyListAnswers; unrouted?: UnroutedAnswers; trustProxy?: boolean | number | string } = {},
): FastifyAdapter {
  const { early } = options;
  return new FastifyAdapter({
    serverFactory: early
      ? (handler: (request: IncomingMessage, response: ServerResponse) => void) => {
          const server = createServer((request, response) => {
            if (!early.answer(request, response)) handler(request, response);
          });
          server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
          server.requestTimeout = 0;
          return server;
        }
      : undefined,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: options.trustProxy ?? false,
    // Bodies are parsed with prototype-poisoning protection (fastify default: error).
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // While it closes, Fastify would answer a request on a kept-alive connection with a 503 body
    // of its own, without the envelope, Retry-After or request id: configureHttpApplication
    // answers those itself (2026-11-27, found by a review).
    return503OnClosing: false,
    // Fastify answers a path parameter over 100 characters with a bare 414 of its own; let long
    // ones reach the handlers, which answer an unknown id or token with the documented 404.
    routerOptions: { maxParamLength: 2048 },
    logger: false,
    genReqId: options.genReqId,
    // A path Fastify cannot decode (bad percent-encoding) or route (a parameter over
    // maxParamLength) names no route or record: 404 in the envelope, not Fastify's own body.
    // Counted against the rate limits like every other request, with their headers.
    frameworkErrors: (_error: Error, request: FastifyRequest, reply: FastifyReply) => {
      reply.header('x-request-id', request.id);
      options.unrouted?.watch(request, reply);
      throughRateLimit(request, reply, () => reply.status(404).type('application/json').send(errorBody('not_found', 'Not found.')));
    },
    clientErrorHandler: answerClientError,
  });
}

/**
 * Requests Node's HTTP parser refuses before any request exists (a request line and headers over
 * its 16 KiB, or no valid HTTP at all) are answered in the envelope too, on the socket, which is
 * then closed as Node and Fastify close it.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const [status, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request line and headers are larger than 16 KiB.']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'The request did not arrive in time.']
          : [400, 'The request is not valid HTTP.'];
    const body = JSON.stringify(errorBody('validation_error', message));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * Everything that makes every endpoint behave the same: the error envelope (Nest routes errors
 * raised while Fastify parses the body through the same filter), request
 * authentication and rate limits, idempotency keys, kept list pages answered early, and validation.
 */
export function configureHttpApplication(
  app: NestFastifyApplication,
  options: {
    limits: () => RateLimits;
    /** the adapter's early answers, with what they report and how they name requests */
    early?: { answers: EarlyListAnswers } & Pick<EarlyListAnswerServices, 'requestId' | 'answered'>;
    /** Throws (503) when no write may be made now: see WriteGate. */
    beforeWrite?: () => void;
  },
): void {
  const fastify = app.getHttpAdapter().getInstance();
  // Once the server closes, a request that still arrives on a kept-alive connection is refused in
  // the envelope (decisions §3: 503 unavailable, Retry-After), and its connection closed. First of
  // this module's hooks: nothing else is done for it.
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    if (!closing) return done();
    reply.header('Connection', 'close');
    replyWithError(reply, new Unavailable('The service is shutting down: send the request again, another instance or this one once restarted will take it.'));
  });
  // A request in flight when the server starts closing is answered as usual, and its connection
  // then closed: kept alive, it held the drain until SHUTDOWN_TIMEOUT_MS (found by a review).
  fastify.addHook('onSend', (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });
  // JSON bodies as Fastify parses them (prototype-poisoning keys refused), except that an empty
  // body is no body: clients that send `Content-Type: application/json` on every POST must not
  // get 400 on one that takes none, or whose body is optional. A refused key is a field of a
  // valid JSON body: 422 with its path, not 400 invalid_json as Fastify reports it. So is a key
  // given twice in one object, which JSON.parse would quietly resolve to the last.
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<Server>('application/json', { bodyLimit: BODY_LIMIT_BYTES }, (request, body, done) => {
    // No body is read for an unknown route: it is 404 (Fastify's not-found route parses bodies too).
    if (body.length === 0 || request.routeOptions.url === undefined) return done(null, undefined);
    const text = body.toString('utf8');
    parseJson(request, text, (error, value) => {
      if (error === null) {
        const repeated = duplicateKeyPaths(text);
        return repeated.length === 0 ? done(null, value) : done(new ValidationFailed(repeated.map((path) => ({ path, message: 'this key is given more than once' }))), undefined);
      }
      const forbidden = forbiddenKeyPaths(text);
      done(forbidden.length === 0 ? error : new ValidationFailed(forbidden.map((path) => ({ path, message: 'this key is not accepted' }))), undefined);
    });
  });
  registerBodyShapeChecks(fastify);
  registerRequestAuthentication(fastify, app.get(CredentialResolver), app.get(RateLimiter), options.limits);
  const beforeBody = app.get(BeforeBodyChecks);
  const beforeBodyLog = new Logger('HTTP');
  // Writes with a body must be JSON; anything else is refused before it is read (after
  // authentication, so the 415 carries the RateLimit-* headers like every other answer).
  const requireJsonBody = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    if (!['POST', 'PUT', 'PATCH'].includes(request.method)) return done();
    const hasBody = Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
    const type = request.headers['content-type'];
    if (hasBody && !(typeof type === 'string' && /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type))) {
      return void replyWithError(reply, { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' });
    }
    done();
  };
  // Hooks of every request take `done` rather than being async: an async hook costs each request
  // a promise and a microtask turn even when it has nothing to do.
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    // An unknown route is 404, whatever its body (Fastify's not-found route reads bodies too).
    const route = request.routeOptions.url;
    if (route === undefined) return done();
    if (PRIVATE_ROUTES.some((prefix) => route.startsWith(prefix)) || PRIVATE_API_ROUTES.has(route)) void reply.header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer');
    // A caller the route's guard will refuse is refused before its body is read: 401 or 403 (a
    // read-only key's write), not 415, 400 or 422 about a body the route would never take.
    if (route.startsWith(API_KEY_ROUTES) && !route.startsWith(CAPABILITY_ROUTES)) {
      const refusal = apiKeyRefusal(request.caller, request.method);
      if (refusal) return void replyWithError(reply, refusal);
    }
    if (route.startsWith(ADMIN_ROUTES)) {
      const refusal = adminRefusal(request.caller);
      if (refusal) return void replyWithError(reply, refusal);
    }
    // The same for a caller whom only the route's own service can refuse (a capability token).
    const check = beforeBody.of(request.method, route);
    if (check === undefined) return requireJsonBody(request, reply, done);
    check(request).then(
      () => requireJsonBody(request, reply, done),
      (error: unknown) => {
        if (replyWithError(reply, error) >= 500) beforeBodyLog.error({ requestId: request.id, msg: error instanceof Error ? error.stack ?? error.message : String(error) });
      },
    );
  });
  // Keys are replayed or claimed once the route's guards let the request through, not in a hook
  // before them (see IdempotencyGuard); the last global guard.
  // The write gate comes after it: a retry whose answer is stored gets its replay, not the refusal.
  app.useGlobalGuards(
    new IdempotencyGuard(registerIdempotency(fastify, app.get(IdempotencyStore)), (guard) => app.get(guard, { strict: false })),
    ...(options.beforeWrite ? [new WriteGate(options.beforeWrite)] : []),
  );
  const limiter = app.get(RateLimiter);
  // Early answers count the hit synchronously: with a limiter in a shared store, every request goes through Fastify.
  if (options.early && limiter instanceof InMemoryRateLimiter) {
    const { answers, requestId, answered } = options.early;
    const resolver = app.get(CredentialResolver);
    answers.enable({
      pages: app.get(ListResponses),
      keptApiKey: (rawKey) => resolver.keptApiKey(rawKey),
      rateLimit: (keyId) => {
        const perMinute = options.limits().keyPerMinute;
        return perMinute > 0 ? limiter.hit(keyBucket(keyId), perMinute, Date.now()) : null;
      },
      requestId,
      answered,
    });
    fastify.addHook('preClose', (done) => {
      answers.close();
      done();
    });
  }
  app.useGlobalFilters(new ErrorEnvelopeFilter());
  app.useGlobalPipes(createValidationPipe());
}
