import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Logger as NestPinoLogger, PinoLogger } from 'nestjs-pino';
import { storage, type Store } from 'nestjs-pino/storage';
import pino, { type DestinationStream, type Logger } from 'pino';
import { redactText, redactUrl } from './redaction';
import { REQUEST_ID_HEADER } from './request-id';

/** Probes and scrapes are answered, counted in metrics, but not logged line by line. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Nest's own start-up chatter (one line per module and route) is debug detail, not info. */
const FRAMEWORK_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication', 'NestApplicationContext']);

/**
 * Structured fields whose value is a secret. Explicit paths only: wildcard paths make pino walk
 * every logged object, which measurably slowed each request line (docs/decisions/observability.md).
 */
const SECRET_FIELDS = [
  'authorization',
  'cookie',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  'apiKey',
  'key',
  'token',
  'adminToken',
  'secret',
  'signingSecret',
  'customerToken',
  'password',
];

const errorSerializer = (error: unknown) => {
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
  if (typeof serialized?.message === 'string') serialized.message = redactText(serialized.message);
  if (typeof serialized?.stack === 'string') serialized.stack = redactText(serialized.stack);
  return serialized;
};

/**
 * The process's root logger: one JSON object per line on stdout (or `destination`), ISO time,
 * level names, secrets redacted from structured fields and from message text.
 */
export function createLogger(options: { level: string; name: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      base: { process: options.name, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: SECRET_FIELDS, censor: '[redacted]' },
      serializers: { err: errorSerializer },
      hooks: {
        logMethod(args, method) {
          for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = redactText(args[i] as string);
          return method.apply(this, args as Parameters<typeof method>);
        },
      },
    },
    // Asynchronous: a slow reader of stdout never stalls the event loop, and lines written while a
    // write is under way go out together. pino flushes what is left synchronously on exit.
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * Nest's LoggerService on top of the root logger (nestjs-pino): every `new Logger(context)` of
 * the code base writes JSON through it, and inside a request the line carries that request's
 * `requestId` (the request logger is found in nestjs-pino's async context).
 */
export function createNestLogger(root: Logger): LoggerService {
  const pinoLogger = new PinoLogger({ pinoHttp: { logger: root } });
  return new (class extends NestPinoLogger {
    override log(message: unknown, ...optionalParams: unknown[]): void {
      const context = optionalParams[optionalParams.length - 1];
      if (typeof context === 'string' && FRAMEWORK_CONTEXTS.has(context)) return super.debug(message, ...optionalParams);
      super.log(message, ...optionalParams);
    }
  })(pinoLogger, {});
}

/**
 * Per-request logging on Fastify, registered before any other hook so that requests refused early
 * (401, 415, 429) are logged and answered with their id too. The request id is Fastify's
 * `request.id` (see requestIdFrom), echoed as X-Request-Id. Every log line written while the
 * request is handled carries it as `requestId` (the request's logger sits in nestjs-pino's async
 * context, created only when something logs); one `request completed` line follows the response.
 * This is what pino-http does, written as two Fastify hooks at half its per-request cost
 * (docs/decisions/observability.md).
 */
export function registerRequestLogging(fastify: FastifyInstance, root: Logger): void {
  // Above `info` there are no request lines, and no per-request listener either (5xx errors are
  // still logged by the error filter, with the request id).
  const logRequests = root.isLevelEnabled('info');
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    let logger: Logger | undefined;
    const context = {
      get logger(): Logger {
        return (logger ??= root.child({ requestId: request.id }));
      },
      set logger(value: Logger) {
        logger = value;
      },
    };
    // On the socket's close rather than in onResponse: hijacked responses (SSE streams) are logged too.
    if (logRequests && !QUIET_PATHS.has(request.url.split('?', 1)[0])) reply.raw.once('close', () => logCompleted(root, request, reply));
    storage.run(context as Store, done);
  });
}

function logCompleted(root: Logger, request: FastifyRequest, reply: FastifyReply): void {
  const statusCode = reply.raw.statusCode;
  const fields = { requestId: request.id, req: { method: request.method, url: redactUrl(request.url) }, res: { statusCode }, durationMs: Math.round(reply.elapsedTime * 10) / 10 };
  if (statusCode >= 500) root.error(fields, 'request completed');
  else root.info(fields, 'request completed');
}
