import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { configureHttpApplication, createHttpAdapter } from '@lib/http';
import { createLogger, createNestLogger, Metrics, registerHttpMetrics, registerRequestLogging, requestIdFrom, REQUEST_ID_HEADER } from '@lib/observability';
import type { AppConfig } from '@lib/shared';
import { GatewayModule, type GatewayOptions } from './gateway.module';
import { serveOpenApi } from './openapi';

/**
 * Builds the HTTP application (not yet listening); used by main and by the tests. `logger`: the
 * process's root logger (default: JSON on stdout at LOG_LEVEL).
 */
export async function createGatewayApp(config: AppConfig, options: GatewayOptions, logger?: Logger): Promise<NestFastifyApplication> {
  const root = logger ?? createLogger({ level: config.logLevel, name: 'gateway' });
  const adapter = createHttpAdapter({ genReqId: (raw) => requestIdFrom(raw.headers[REQUEST_ID_HEADER]) });
  // First of all hooks: requests refused by a later one are logged and carry their id too.
  registerRequestLogging(adapter.getInstance(), root);
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config, options), adapter, {
    logger: createNestLogger(root),
    abortOnError: false,
  });
  registerHttpMetrics(adapter.getInstance(), app.get(Metrics));
  configureHttpApplication(app, {
    limits: () => ({
      ipPerMinute: config.rateLimitIpPerMin,
      keyPerMinute: config.rateLimitKeyPerMin,
      capabilityPerMinute: config.rateLimitCapabilityPerMin,
    }),
  });
  serveOpenApi(app, config.publicBaseUrl);
  await app.init();
  return app;
}
