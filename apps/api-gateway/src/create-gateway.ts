import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { configureHttpApplication, createHttpAdapter } from '@lib/http';
import type { AppConfig } from '@lib/shared';
import { GatewayModule, type GatewayOptions } from './gateway.module';
import { serveOpenApi } from './openapi';

/** Builds the HTTP application (not yet listening); used by main and by the tests. */
export async function createGatewayApp(config: AppConfig, options: GatewayOptions, logger: false | undefined = undefined): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config, options), createHttpAdapter(), {
    logger: logger === false ? false : ['warn', 'error'],
    bufferLogs: false,
    abortOnError: false,
  });
  configureHttpApplication(app, {
    limits: () => ({
      ipPerMinute: config.rateLimitIpPerMin,
      keyPerMinute: config.rateLimitKeyPerMin,
      capabilityPerMinute: config.rateLimitCapabilityPerMin,
    }),
  });
  serveOpenApi(app, config.publicBaseUrl);
  app.enableShutdownHooks();
  await app.init();
  return app;
}
