import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CommandBus } from '@nestjs/cqrs';
import { MongoClient } from 'mongodb';
import { ReadYourWrites } from '@lib/event-sourcing';
import { ObservabilityModule } from '@lib/observability';
import { DomainModule } from '@lib/bootstrap';
import { CreateApiKey, CreateOrganization, type CreatedApiKey, type CreatedOrganization } from '@lib/organizations';
import { withDatabase } from '@lib/read-store/mongo-read-store';
import { requireMongoUrl, uniqueDatabaseName } from '@lib/read-store/testing/mongo-test-database';
import { ConfigModule, RuntimeModule } from '@lib/runtime';
import { loadConfig, type AppConfig } from '@lib/shared';
import { createGatewayApp } from '../apps/api-gateway/src/create-gateway';
import { ProjectorModule } from '../apps/projector/src/projector.module';

const ADMIN_TOKEN = 'adm_scale_out_0123456789_padded_to_32_chars';

@Module({})
class ProjectorProcess {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: ProjectorProcess, imports: [ConfigModule.forRoot(config), RuntimeModule, ObservabilityModule.forRoot({ projectionsMustBeCurrent: true }), DomainModule, ProjectorModule] };
  }
}

/**
 * The scaled-out topology on MongoDB: two gateways started as with `--only-gateway` and a
 * projector, each its own Nest application sharing only the stores (the event log on a shared
 * DATA_DIR, the read models and the gateway state in one MongoDB database), as separate
 * processes behind a load balancer would.
 */
describe('two gateways and a projector on one MongoDB database', () => {
  const url = requireMongoUrl();
  const database = uniqueDatabaseName('scale_out');
  let dataDir: string;
  let projector: INestApplicationContext;
  let gateways: NestFastifyApplication[];
  let organizationId: string;
  let apiKey: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'scale-out-'));
    const config = loadConfig({
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
      MONGODB_URL: withDatabase(url, database),
      RATE_LIMIT_IP_PER_MIN: '0',
      RATE_LIMIT_KEY_PER_MIN: '6',
      RATE_LIMIT_CAPABILITY_PER_MIN: '0',
    });
    projector = await NestFactory.createApplicationContext(ProjectorProcess.forRoot(config), { logger: false });
    gateways = [await createGatewayApp(config, { withWorkers: false }), await createGatewayApp(config, { withWorkers: false })];
    // The projector's first start, on a FerretDB the rest of the engine suite was loading, once
    // took more than the 10 s a write waits (a CI run, 2026-11-27): the setup's writes wait
    // longer; the tests' own are made once the projector runs, with the usual wait.
    const usualWait = gateways[0].get(ReadYourWrites).timeoutMs;
    for (const gateway of gateways) gateway.get(ReadYourWrites).timeoutMs = 60_000;
    const commands = gateways[0].get(CommandBus);
    ({ organizationId } = await commands.execute<CreateOrganization, CreatedOrganization>(
      new CreateOrganization({ name: 'Scale Out', slug: `scale-${Date.now()}`, locale: 'en', unitSystem: 'metric', currency: 'EUR', plan: 'pro' }),
    ));
    apiKey = (await commands.execute<CreateApiKey, CreatedApiKey>(new CreateApiKey(organizationId, 'full', false))).key;
    for (const gateway of gateways) gateway.get(ReadYourWrites).timeoutMs = usualWait;
  });
  afterAll(async () => {
    await Promise.all([...(gateways ?? []), projector].filter(Boolean).map((app) => app.close()));
    const client = await MongoClient.connect(url);
    await client.db(database).dropDatabase();
    await client.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const request = async (gateway: number, method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}, key = apiKey) => {
    const response = await gateways[gateway].inject({
      method,
      url: path,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      payload: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.statusCode, headers: response.headers, body: response.json() };
  };

  it('reads its own write at once on either gateway, while another process runs the projections', async () => {
    const created = await request(0, 'POST', '/api/v1/contacts', { email: 'ryw@example.com', name: 'Read Your Writes' });
    expect(created.status).toBe(201);
    expect((await request(0, 'GET', `/api/v1/contacts/${created.body.id}`)).body).toMatchObject({ id: created.body.id, name: 'Read Your Writes' });

    const again = await request(1, 'POST', '/api/v1/contacts', { email: 'ryw2@example.com', name: 'Second' });
    expect((await request(1, 'GET', `/api/v1/contacts/${again.body.id}`)).status).toBe(200);
  });

  it('runs a request retried on the other gateway with the same Idempotency-Key once', async () => {
    const headers = { 'idempotency-key': `scale-out-${Date.now()}` };
    const body = { email: 'idem-across@example.com', name: 'Once' };
    const [first, second] = await Promise.all([request(0, 'POST', '/api/v1/contacts', body, headers), request(1, 'POST', '/api/v1/contacts', body, headers)]);

    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body).toEqual(first.body);
    expect([first.headers['idempotent-replayed'], second.headers['idempotent-replayed']].filter(Boolean)).toEqual(['true']);
  });

  it('counts one API key against one rate limit across both gateways', async () => {
    const key = (await gateways[1].get(CommandBus).execute<CreateApiKey, CreatedApiKey>(new CreateApiKey(organizationId, 'limited', false))).key;
    // All in one one-minute window: start early enough in it.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));

    const responses = [];
    for (let i = 0; i < 8; i++) responses.push(await request(i % 2, 'GET', '/api/v1/contacts', undefined, {}, key));

    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    expect(responses.map((response) => response.headers['ratelimit-remaining'])).toEqual(['5', '4', '3', '2', '1', '0', '0', '0']);
    expect(responses[6].headers['retry-after']).toBeDefined();
  });
});
