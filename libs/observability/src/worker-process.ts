import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AppConfig } from '@lib/shared';
import { createLogger, createNestLogger } from './logging';
import { Metrics } from './metrics';
import { startOpsServer } from './ops-server';
import { Readiness } from './readiness';
import { stopOnSignals } from './shutdown';

/**
 * Starts a process without an HTTP API (standalone projector or outbox): JSON logs, graceful
 * shutdown on SIGTERM, and /healthz, /readyz, /metrics on OPS_PORT when it is set.
 */
export async function runWorkerProcess(name: string, config: AppConfig, module: DynamicModule): Promise<void> {
  const logger = createLogger({ level: config.logLevel, name });
  const app = await NestFactory.createApplicationContext(module, { abortOnError: false, logger: createNestLogger(logger) });
  const ops = config.opsPort
    ? await startOpsServer({ port: config.opsPort, host: config.host, readiness: app.get(Readiness), metrics: app.get(Metrics) })
    : null;
  stopOnSignals(app, {
    logger,
    timeoutMs: config.shutdownTimeoutMs,
    alsoClose: ops ? () => new Promise<void>((resolve) => ops.close(() => resolve())) : undefined,
  });
  logger.info({ opsPort: config.opsPort ?? null }, 'started');
}
