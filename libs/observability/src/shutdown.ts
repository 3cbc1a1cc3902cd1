import type { INestApplicationContext } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { Readiness } from './readiness';

export interface ShutdownOptions {
  logger: Logger;
  /** bound on draining in-flight HTTP requests, then on the rest of the shutdown */
  timeoutMs: number;
  /** how long the HTTP server keeps accepting, with /readyz at 503, before it stops (a load balancer polling /readyz drains it) */
  notReadyMs?: number;
  /** the HTTP server to drain first (the gateway); absent in processes without an API */
  http?: FastifyInstance;
  /** ends long-lived responses (SSE) that would otherwise hold the drain until its bound */
  endLongLivedResponses?: () => void;
  /** closed after the application (the OPS_PORT server) */
  alsoClose?: () => Promise<void>;
}

/**
 * SIGTERM / SIGINT: report not ready (and keep accepting for `notReadyMs`, for load balancers
 * that poll readiness), stop accepting connections and let in-flight requests
 * finish (bounded), then close the application — Nest's hooks let in-flight webhook attempts
 * finish and record their outcome, stop the subscriptions after their current batch, flush the
 * projections' checkpoints and close the stores — and exit 0. A second signal, or a shutdown that
 * overruns its bounds, exits 1 at once; whatever was interrupted is made again after the restart
 * (deliveries are recovered to pending, subscriptions resume from their checkpoints).
 */
export function stopOnSignals(app: INestApplicationContext, options: ShutdownOptions): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      options.logger.warn({ signal }, 'second signal during shutdown; exiting now');
      process.exit(1);
    }
    stopping = true;
    // Twice the timeout (the drain, then the application's close), the not-ready time and a second to spare.
    const allowedMs = 2 * options.timeoutMs + (options.notReadyMs ?? 0) + 1_000;
    const deadline = setTimeout(() => {
      options.logger.error({ timeoutMs: allowedMs }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, allowedMs);
    deadline.unref();
    void shutDown(app, options, signal).then(
      () => {
        options.logger.info('stopped');
        process.exit(0);
      },
      (error) => {
        options.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

async function shutDown(app: INestApplicationContext, options: ShutdownOptions, signal: NodeJS.Signals): Promise<void> {
  options.logger.info({ signal }, 'shutting down');
  app.get(Readiness, { strict: false }).markStopping();
  if (options.http && options.notReadyMs) {
    // Still accepting, so requests a load balancer sends before it sees the 503 are answered.
    options.logger.info({ notReadyMs: options.notReadyMs }, 'not ready; still accepting until load balancers notice');
    await new Promise((resolve) => setTimeout(resolve, options.notReadyMs));
  }
  if (options.http) {
    options.endLongLivedResponses?.();
    await drain(options.http, options);
  }
  await app.close();
  await options.alsoClose?.();
}

/** Stops accepting connections and waits for in-flight requests; past the bound, cuts them off. */
async function drain(http: FastifyInstance, options: ShutdownOptions): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = http.close().then(() => true);
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), options.timeoutMs);
  });
  const finished = await Promise.race([closed, timedOut]);
  clearTimeout(timer);
  if (!finished) {
    options.logger.warn({ timeoutMs: options.timeoutMs }, 'in-flight requests did not finish in time; closing their connections');
    http.server.closeAllConnections();
    await closed;
  }
}
