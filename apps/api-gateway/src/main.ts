import 'reflect-metadata';
import { join } from 'node:path';
import { prepareRuntime } from '@lib/bootstrap';
import { createGatewayApp } from './create-gateway';
import { seedDemo } from './seed-demo';

async function main(): Promise<void> {
  const { config, generatedAdminToken } = prepareRuntime();
  const onlyGateway = process.argv.includes('--only-gateway');
  const app = await createGatewayApp(config, { withWorkers: !onlyGateway });
  await app.listen(config.port, config.host);
  const lines = [
    `API:        ${config.publicBaseUrl}/api/v1   (OpenAPI: ${config.publicBaseUrl}/openapi.yaml)`,
    `Admin API:  ${config.publicBaseUrl}/admin/v1  token in ${join(config.dataDir, 'admin-token')}`,
  ];
  if (generatedAdminToken) lines.push(`Admin token (generated, shown once): ${config.adminToken}`);
  if (config.seedDemo) {
    const demo = await seedDemo(app, config);
    if (demo) lines.push(...demo);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error) => {
  process.stderr.write(`start-up failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
