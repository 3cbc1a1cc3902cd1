import Fastify, { FastifyInstance } from 'fastify';
import { MongoClient } from 'mongodb';
import { requireMongoUrl, uniqueDatabaseName } from '@lib/read-store/testing/mongo-test-database';
import { carriesIdempotencyKey, IDEMPOTENCY_CLAIM_MS, registerIdempotency } from './idempotency';
import { MongoIdempotencyStore, MongoRateLimiter } from './mongo-gateway-state';
import { describeIdempotencyStoreContract } from './testing/idempotency-store.contract';

const url = requireMongoUrl();
const database = uniqueDatabaseName('gateway_state');
/** Two gateways: each has its own connection to the shared database. */
let clients: MongoClient[];

beforeAll(async () => {
  clients = await Promise.all([MongoClient.connect(url), MongoClient.connect(url)]);
});
afterAll(async () => {
  await clients[0].db(database).dropDatabase();
  await Promise.all(clients.map((client) => client.close()));
});

describeIdempotencyStoreContract('MongoIdempotencyStore', () => {
  // A collection of its own per test, in the shared database: the contract reuses its keys.
  const collection = `idempotency_contract_${Math.random().toString(36).slice(2)}`;
  return {
    store: new MongoIdempotencyStore(clients[0].db(database), collection),
    cleanup: async () => void (await clients[0].db(database).collection(collection).drop().catch(() => undefined)),
  };
});

describe('MongoRateLimiter', () => {
  const minute = 60_000;
  const t0 = 1_700_000_040_000 - (1_700_000_040_000 % minute);

  it('counts the hits of every gateway against one limit, atomically', async () => {
    const [a, b] = clients.map((client) => new MongoRateLimiter(client.db(database)));
    const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).hit('key:k1', 20, t0 + 1_000)));

    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    expect(decisions.map((d) => d.remaining).sort((x, y) => x - y)).toEqual([...Array(11).fill(0), ...Array.from({ length: 19 }, (_, i) => i + 1)]);
    expect(decisions[0]).toMatchObject({ limit: 20, resetSeconds: 59 });
  });

  it('starts a fresh count in the next window and keeps buckets apart', async () => {
    const [a, b] = clients.map((client) => new MongoRateLimiter(client.db(database)));
    await a.hit('ip:10.0.0.1', 1, t0 + 5 * minute);
    expect(await b.hit('ip:10.0.0.1', 1, t0 + 5 * minute + 30_000)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 30 });
    expect(await b.hit('ip:10.0.0.2', 1, t0 + 5 * minute + 30_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await a.hit('ip:10.0.0.1', 1, t0 + 6 * minute)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 60 });
  });
});

describe('MongoIdempotencyStore across gateways', () => {
  let gateways: FastifyInstance[];
  let clock: number;
  let executions: number;
  let failNext: boolean;

  beforeEach(async () => {
    clock = Date.now();
    executions = 0;
    failNext = false;
    gateways = clients.map((client) => {
      const app = Fastify();
      const replayOrClaim = registerIdempotency(app, new MongoIdempotencyStore(client.db(database)), () => clock);
      // Where IdempotencyGuard runs it in the application: once the request is authorized.
      app.addHook('preHandler', async (request, reply) => {
        if (carriesIdempotencyKey(request) && (await replayOrClaim(request, reply))) return reply;
      });
      app.post('/things', async (request, reply) => {
        executions++;
        await new Promise((resolve) => setTimeout(resolve, 150));
        if (failNext) {
          failNext = false;
          return reply.status(503).send({ error: { code: 'unavailable' } });
        }
        return reply.status(201).send({ id: `thing-${executions}`, body: request.body });
      });
      return app;
    });
    await Promise.all(gateways.map((app) => app.ready()));
  });
  afterEach(async () => {
    await Promise.all(gateways.map((app) => app.close()));
  });

  const post = (gateway: number, key: string, body: unknown = { name: 'a' }) =>
    gateways[gateway].inject({ method: 'POST', url: '/things', headers: { 'idempotency-key': key }, payload: body as object });

  it('runs concurrent duplicates sent to two gateways once; the other waits and replays the response', async () => {
    const key = `k-${Math.random()}`;
    const [first, second] = await Promise.all([post(0, key), post(1, key)]);

    expect(executions).toBe(1);
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    expect(first.body).toBe(second.body);
    expect([first.headers['idempotent-replayed'], second.headers['idempotent-replayed']].sort()).toEqual(['true', undefined]);

    const later = await post(1, key);
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(JSON.parse(later.body)).toEqual(JSON.parse(first.body));
    expect(executions).toBe(1);
  });

  it('refuses the same key with another body on another gateway', async () => {
    const key = `k-${Math.random()}`;
    await post(0, key, { name: 'a' });
    const other = await post(1, key, { name: 'b' });
    expect(other.statusCode).toBe(422);
    expect(JSON.parse(other.body).error.details.fields[0].path).toBe('Idempotency-Key');
  });

  it('does not keep a 5xx answer: a retry on another gateway runs again', async () => {
    const key = `k-${Math.random()}`;
    failNext = true;
    expect((await post(0, key)).statusCode).toBe(503);
    const retry = await post(1, key);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(executions).toBe(2);
  });

  it('takes over the claim of a gateway that died mid-request once the claim lapses', async () => {
    const key = `k-${Math.random()}`;
    const store = new MongoIdempotencyStore(clients[0].db(database));
    const scope = 'ip:127.0.0.1 POST /things';
    expect(await store.claim(scope, key, { owner: 'dead-gateway', until: clock + IDEMPOTENCY_CLAIM_MS }, clock)).toBe(true);
    expect(await store.claim(scope, key, { owner: 'another', until: clock + IDEMPOTENCY_CLAIM_MS }, clock + 1_000)).toBe(false);

    clock += IDEMPOTENCY_CLAIM_MS + 1;
    const response = await post(1, key);
    expect(response.statusCode).toBe(201);
    expect(executions).toBe(1);
  });

  it('expires a stored response after 24 hours', async () => {
    const key = `k-${Math.random()}`;
    await post(0, key);
    clock += 24 * 60 * 60 * 1000 + 1;
    const again = await post(1, key);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(executions).toBe(2);
  });
});
