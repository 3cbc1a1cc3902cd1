import type { IncomingMessage } from 'node:http';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { ReadYourWrites } from '@lib/event-sourcing';
import { configureHttpApplication, createHttpAdapter, EarlyListAnswers, UnroutedAnswers, type KeptPage } from '@lib/http';
import { createLogger, createNestLogger, logRequestCompleted, Metrics, redactUrl, registerHttpMetrics, registerRequestLogging, requestIdFrom, REQUEST_ID_HEADER } from '@lib/observability';
import type { AppConfig } from '@lib/shared';
import { GatewayModule, type GatewayOptions } from './gateway.module';
import { serveOpenApi } from './openapi';

/**
 * Builds the HTTP application (not yet listening); used by main and by the tests. `logger`: the
 * process's root logger (default: JSON on stdout at LOG_LEVEL).
 */
export async function createGatewayApp(config: AppConfig, options: GatewayOptions, logger?: Logger): Promise<NestFastifyApplication> {
  const root = logger ?? createLogger({ level: config.logLevel, name: 'gateway' });
  const requestId = (raw: IncomingMessage) => requestIdFrom(raw.headers[REQUEST_ID_HEADER]);
  const early = new EarlyListAnswers();
  const loggedUrls = new WeakMap<KeptPage, string>();
  const unrouted = new UnroutedAnswers();
  const adapter = createHttpAdapter({ genReqId: requestId, early, unrouted, trustProxy: config.trustProxy });
  // First of all hooks: requests refused by a later one are logged and carry their id too.
  registerRequestLogging(adapter.getInstance(), root);
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config, options), adapter, {
    logger: createNestLogger(root),
    abortOnError: false,
  });
  const metrics = app.get(Metrics);
  const readYourWrites = app.get(ReadYourWrites);
  registerHttpMetrics(adapter.getInstance(), metrics);
  // Requests Fastify answered before its hooks (a malformed path) are logged and measured as the others.
  unrouted.observe((request, reply) => {
    const { statusCode } = reply.raw;
    logRequestCompleted(root, { requestId: request.id, method: request.method, url: request.url, statusCode, elapsedMs: reply.elapsedTime });
    // Fastify starts no timer for them: counted, but not in the durations (they would all be 0).
    metrics.countRequest(request.method, 'unmatched', statusCode, null);
  });
  metrics.readWritesRefusedFrom(() => readYourWrites.refusingWrites());
  configureHttpApplication(app, {
    beforeWrite: () => readYourWrites.assertKeepingUp(),
    limits: () => ({
      ipPerMinute: config.rateLimitIpPerMin,
      keyPerMinute: config.rateLimitKeyPerMin,
      capabilityPerMinute: config.rateLimitCapabilityPerMin,
    }),
    // Requests answered before Fastify are logged and measured as its hooks log and measure the others.
    early: {
      answers: early,
      requestId,
      answered: (raw, id, page, statusCode, elapsedMs) => {
        const url = raw.url ?? '';
        const method = raw.method ?? 'GET';
        // A kept page answers one URL: its redacted form is worked out once.
        let loggedUrl = loggedUrls.get(page);
        if (loggedUrl === undefined) loggedUrls.set(page, (loggedUrl = redactUrl(url)));
        logRequestCompleted(root, { requestId: id, method, url, loggedUrl, statusCode, elapsedMs });
        metrics.countRequest(method, page.route, statusCode, elapsedMs);
      },
    },
  });
  serveOpenApi(app, config.publicBaseUrl);
  await app.init();
  return app;
}
