import type { IncomingMessage } from 'node:http';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CredentialResolver } from './auth';
import { registerBodyShapeChecks } from './body-depth';
import { ErrorEnvelopeFilter, toErrorResponse } from './error-envelope.filter';
import { IdempotencyStore, registerIdempotency } from './idempotency';
import { ListResponses, registerListResponses } from './list-responses';
import { RateLimiter, registerRequestAuthentication, type RateLimits } from './rate-limit';
import { createValidationPipe } from './validation';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** `genReqId`: the id of each request (X-Request-Id), from the raw request. */
export function createHttpAdapter(options: { genReqId?: (raw: IncomingMessage) => string } = {}): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: process.env.TRUST_PROXY === 'true',
    // Bodies are parsed with prototype-poisoning protection (fastify default: error).
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    // Fastify answers a path parameter over 100 characters with a bare 414 of its own; let long
    // ones reach the handlers, which answer an unknown id or token with the documented 404.
    routerOptions: { maxParamLength: 2048 },
    logger: false,
    genReqId: options.genReqId,
  });
}

/**
 * Everything that makes every endpoint behave the same: the error envelope (Nest routes errors
 * raised while Fastify parses the body through the same filter), request
 * authentication and rate limits, idempotency keys, kept list pages, and validation.
 */
export function configureHttpApplication(
  app: NestFastifyApplication,
  options: { limits: () => RateLimits },
): void {
  const fastify = app.getHttpAdapter().getInstance();
  // Writes with a body must be JSON; anything else is refused before it is read.
  // Hooks of every request are written with `done` rather than async: an async hook costs each
  // request a promise and a microtask turn even when it has nothing to do.
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    if (!['POST', 'PUT', 'PATCH'].includes(request.method)) return done();
    const hasBody = Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
    const type = request.headers['content-type'];
    if (hasBody && !(typeof type === 'string' && /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type))) {
      const { status, body } = toErrorResponse({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' });
      reply.status(status).type('application/json').send(body);
      return;
    }
    done();
  });
  registerBodyShapeChecks(fastify);
  registerRequestAuthentication(fastify, app.get(CredentialResolver), app.get(RateLimiter), options.limits);
  registerIdempotency(fastify, app.get(IdempotencyStore));
  registerListResponses(fastify, app.get(ListResponses));
  app.useGlobalFilters(new ErrorEnvelopeFilter());
  app.useGlobalPipes(createValidationPipe());
}
