import type { IncomingMessage } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { Logger as NestPinoLogger, PinoLogger } from 'nestjs-pino';
import { Store, storage } from 'nestjs-pino/storage';
import pino, { type DestinationStream, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { redactText, redactUrl } from './redaction';
import { REQUEST_ID_HEADER } from './request-id';

/** Probes and scrapes are answered, counted in metrics, but not logged line by line. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Nest's own start-up chatter (one line per module and route) is debug detail, not info. */
const FRAMEWORK_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication', 'NestApplicationContext']);

/** Structured fields whose value is a secret, wherever they appear in a logged object. */
const SECRET_FIELDS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  '*.authorization',
  '*.apiKey',
  '*.key',
  '*.token',
  '*.adminToken',
  '*.secret',
  '*.signingSecret',
  '*.customerToken',
  '*.password',
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
    options.destination ?? pino.destination({ dest: 1, sync: true }),
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
 * Per-request logging on Fastify (pino-http), registered before any other hook so that requests
 * refused early (401, 415, 429) are logged and answered with their id too. The request id is
 * Fastify's `request.id` (see requestIdFrom), echoed as X-Request-Id; every log line written while
 * the request is handled carries it as `requestId`.
 */
export function registerRequestLogging(fastify: FastifyInstance, root: Logger): void {
  const httpLogger = pinoHttp({
    logger: root,
    genReqId: (req: IncomingMessage) => req.id,
    quietReqLogger: true,
    customAttributeKeys: { reqId: 'requestId', responseTime: 'durationMs' },
    autoLogging: { ignore: (req) => QUIET_PATHS.has((req.url ?? '').split('?')[0]) },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
    serializers: {
      req: (req: { method: string; url: string }) => ({ method: req.method, url: redactUrl(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    request.raw.id = request.id;
    reply.header(REQUEST_ID_HEADER, request.id);
    httpLogger(request.raw, reply.raw);
    storage.run(new Store(request.raw.log), done);
  });
}
