import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Logger as NestPinoLogger, PinoLogger } from 'nestjs-pino';
import pino, { type DestinationStream, type Logger } from 'pino';
import { redactLogText, redactUrl } from './redaction';
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

let lastMillisecond = 0;
let lastTime = '';

/** pino's isoTime, formatted once per millisecond: a busy process writes many lines in one. */
function isoTimeOfMillisecond(): string {
  const now = Date.now();
  if (now !== lastMillisecond) {
    lastMillisecond = now;
    lastTime = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTime;
}

const errorSerializer = (error: unknown) => {
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
  if (typeof serialized?.message === 'string') serialized.message = redactLogText(serialized.message);
  if (typeof serialized?.stack === 'string') serialized.stack = redactLogText(serialized.stack);
  return serialized;
};

/**
 * The process's root logger: one JSON object per line on stdout (or `destination`), ISO time,
 * level names, secrets redacted from structured fields and from message text.
 */
export function createLogger(options: { level: string; name: string; destination?: DestinationStream }): Logger {
  // Asynchronous: a slow reader of stdout never stalls the event loop, and lines written while a
  // write is under way go out together. pino flushes what is left synchronously on exit.
  const destination = options.destination ?? pino.destination({ dest: 1, sync: false });
  const root = pino(
    {
      level: options.level,
      base: { process: options.name, pid: process.pid },
      timestamp: isoTimeOfMillisecond,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: SECRET_FIELDS, censor: '[redacted]' },
      serializers: { err: errorSerializer },
      hooks: {
        logMethod(args, method) {
          for (let i = 0; i < args.length; i++) {
            const arg = args[i] as unknown;
            if (typeof arg === 'string') args[i] = redactLogText(arg);
            // A message given as the logged object's `msg` (how nestjs-pino passes an object with one) is text too.
            else if (arg && typeof arg === 'object' && typeof (arg as { msg?: unknown }).msg === 'string') {
              args[i] = { ...(arg as object), msg: redactLogText((arg as { msg: string }).msg) } as never;
            }
          }
          return method.apply(this, args as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
  requestLines.set(root, { lines: new RequestLineBatch(destination), base: `,"process":${JSON.stringify(options.name)},"pid":${process.pid}` });
  return root;
}

/**
 * Where a root logger made by createLogger writes, and the base fields of its lines: the
 * `request completed` line of every request is written there directly (see logRequestCompleted).
 */
const requestLines = new WeakMap<Logger, { lines: RequestLineBatch; base: string }>();

/** Batches that hold lines not yet handed to their destination. */
const unwritten = new Set<RequestLineBatch>();
let flushOnExit = false;

/** Hands every batched request line to its destination now (tests that read the lines at once). */
export function flushRequestLines(): void {
  unwritten.forEach((batch) => batch.write());
}

/** How long a request line may wait for others before the batch is written. */
const REQUEST_LINES_DELAY_MS = 10;
/** A batch this large is written at once. */
const REQUEST_LINES_MAX_CHARS = 64 * 1024;

/**
 * Request lines, handed to the destination together: at most 10 ms after the first of them, or
 * at once when 64 KiB are waiting. One write per line cost the destination (sonic-boom) a scan of
 * everything it held unwritten on each call, and an asynchronous write of its own as often as the
 * previous one had finished: ~20 µs of a kept list request that took ~65 (docs/benchmarks.md).
 * Lines logged otherwise in the meantime may therefore come before a request line, which carries
 * its own time. On a normal exit the batch is handed over before pino flushes its destination; a
 * process killed outright loses the lines of its last 10 ms, as it loses what pino's destination
 * held unwritten (docs/decisions/observability.md).
 */
class RequestLineBatch {
  private pending = '';
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly destination: DestinationStream) {}

  add(line: string): void {
    if (this.pending === '') {
      this.timer = setTimeout(this.write, REQUEST_LINES_DELAY_MS);
      unwritten.add(this);
      if (!flushOnExit) {
        flushOnExit = true;
        // Before pino's own handler (registered when its destination was made), which flushes it.
        process.prependListener('exit', () => unwritten.forEach((batch) => batch.writeOnExit()));
      }
    }
    this.pending += line;
    if (this.pending.length >= REQUEST_LINES_MAX_CHARS) this.write();
  }

  readonly write = (): void => {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending === '') return;
    const lines = this.pending;
    this.pending = '';
    unwritten.delete(this);
    this.destination.write(lines);
  };

  writeOnExit(): void {
    try {
      this.write();
    } catch {
      // A destination already ended (pino ends its own once the loop has run dry) takes no more lines.
    }
  }
}

/**
 * Nest's LoggerService on top of the root logger (nestjs-pino): every `new Logger(context)` of
 * the code base writes JSON through it.
 */
export function createNestLogger(root: Logger): LoggerService {
  const pinoLogger = new RootPinoLogger(root);
  return new (class extends NestPinoLogger {
    override log(message: unknown, ...optionalParams: unknown[]): void {
      const context = optionalParams[optionalParams.length - 1];
      if (typeof context === 'string' && FRAMEWORK_CONTEXTS.has(context)) return super.debug(message, ...optionalParams);
      super.log(message, ...optionalParams);
    }
  })(pinoLogger, {});
}

/**
 * nestjs-pino's PinoLogger writes through a logger kept in a module variable, set by the first
 * instance of the process; this one always writes through the root logger it was given.
 */
class RootPinoLogger extends PinoLogger {
  constructor(private readonly root: Logger) {
    super({ pinoHttp: { logger: root } });
  }

  override get logger(): Logger {
    return this.root;
  }
}

/**
 * Per-request logging on Fastify, registered before any other hook so that requests refused early
 * (401, 415, 429) are logged and answered with their id too. The request id is Fastify's
 * `request.id` (see requestIdFrom), echoed as X-Request-Id; one `request completed` line with it
 * follows the response, and the error filter puts it on the line of a 5xx.
 *
 * Lines that deeper code writes while a request runs do not carry the id: that would need an
 * AsyncLocalStorage context per request, and on Node 20 entering one turns on promise hooks for
 * every promise of the process, which measured 63 µs of CPU per request, 44 % of a `/healthz`
 * (docs/decisions/observability.md).
 */
export function registerRequestLogging(fastify: FastifyInstance, root: Logger): void {
  // Above `info` there are no request lines, and no per-request listener either.
  const logRequests = root.isLevelEnabled('info');
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    // On the socket's close rather than in onResponse: hijacked responses (SSE streams) are logged too.
    if (logRequests && !QUIET_PATHS.has(request.url.split('?', 1)[0])) reply.raw.once('close', () => logCompleted(root, request, reply));
    done();
  });
}

function logCompleted(root: Logger, request: FastifyRequest, reply: FastifyReply): void {
  logRequestCompleted(root, { requestId: request.id, method: request.method, url: request.url, statusCode: reply.raw.statusCode, elapsedMs: reply.elapsedTime });
}

/** One answered request, as its `request completed` line tells it. */
export interface CompletedRequest {
  requestId: string;
  method: string;
  /** the raw URL: it is redacted here */
  url: string;
  /** `redactUrl(url)`, when the caller keeps it */
  loggedUrl?: string;
  statusCode: number;
  elapsedMs: number;
}

/** The `request completed` line of a request (error level for a 5xx): the Fastify hook's, and that of requests answered before Fastify. */
export function logRequestCompleted(root: Logger, completed: CompletedRequest): void {
  const { requestId, method, statusCode } = completed;
  const level = statusCode >= 500 ? 'error' : 'info';
  if (!root.isLevelEnabled(level)) return;
  const durationMs = Math.round(completed.elapsedMs * 10) / 10;
  const url = completed.loggedUrl ?? redactUrl(completed.url);
  const direct = requestLines.get(root);
  if (direct === undefined) {
    root[level]({ requestId, req: { method, url }, res: { statusCode }, durationMs }, 'request completed');
    return;
  }
  // The same line pino writes for these fields, composed here: one request line through pino's
  // redaction, hooks and serializer cost ~25 µs, a third of a cached list request. Nothing in it
  // needs redacting: the id is plain characters and no secret (requestIdFrom), the URL is
  // redacted above, the rest are numbers and the method.
  direct.lines.add(
    `{"level":"${level}"${isoTimeOfMillisecond()}${direct.base},"requestId":${JSON.stringify(requestId)},"req":{"method":${JSON.stringify(method)},"url":${JSON.stringify(url)}},"res":{"statusCode":${statusCode}},"durationMs":${durationMs},"msg":"request completed"}\n`,
  );
}
