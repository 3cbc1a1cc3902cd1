// First: V8 options that must be in place before anything is allocated.
import '@lib/runtime/heap-tuning';
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { prepareRuntime } from '@lib/bootstrap';
import { createLogger, stopOnSignals } from '@lib/observability';
import { SessionEventStreams } from '@lib/sessions';
import { listenFailure, startUpFailureLine } from '@lib/shared';
import { createGatewayApp } from './create-gateway';
import { seedDemo } from './seed-demo';

async function main(): Promise<void> {
  const { config, generatedAdminToken, adminTokenFile } = prepareRuntime(process.env, { listensOnPort: true });
  const onlyGateway = process.argv.includes('--only-gateway');
  const logger = createLogger({ level: config.logLevel, name: onlyGateway ? 'gateway' : 'gateway+projector+outbox' });
  const app = await createGatewayApp(config, { withWorkers: !onlyGateway }, logger);
  await app.listen(config.port, config.host).catch((error: unknown) => {
    throw listenFailure(error, 'PORT');
  });
  stopOnSignals(app, {
    logger,
    timeoutMs: config.shutdownTimeoutMs,
    notReadyMs: config.shutdownNotReadyMs,
    http: app.getHttpAdapter().getInstance(),
    endLongLivedResponses: () => app.get(SessionEventStreams, { strict: false }).closeAll(),
  });
  // The port listened on: PORT=0 takes any free one.
  const port = (app.getHttpServer().address() as AddressInfo | null)?.port ?? config.port;
  logger.info({ api: `${config.publicBaseUrl}/api/v1`, host: config.host, port, workers: !onlyGateway }, 'listening');
  // The first-run banner is for the person at the terminal, on stderr so stdout stays one JSON
  // object per line; the admin token and demo keys appear here only, never in the JSON log.
  const lines = [
    `API:        ${config.publicBaseUrl}/api/v1   (OpenAPI: ${config.publicBaseUrl}/openapi.yaml)`,
    `Admin API:  ${config.publicBaseUrl}/admin/v1  token ${adminTokenFile ? `in ${adminTokenFile}` : 'from ADMIN_TOKEN'}`,
    `Monitoring: ${config.publicBaseUrl}/healthz  /readyz  /metrics`,
  ];
  if (generatedAdminToken) lines.push(`Admin token (generated, shown once): ${config.adminToken}`);
  if (config.seedDemo) {
    const demo = await seedDemo(app, config);
    if (demo) lines.push(...demo);
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}

main().catch((error) => {
  process.stderr.write(`${startUpFailureLine(error)}\n`);
  process.exit(1);
});
