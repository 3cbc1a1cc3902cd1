import Fastify, { FastifyInstance } from 'fastify';
import { IDEMPOTENCY_CLAIM_MS, InMemoryIdempotencyStore, registerIdempotency } from './idempotency';

describe('Idempotency-Key in one gateway (in-memory store)', () => {
  let app: FastifyInstance;
  let store: InMemoryIdempotencyStore;
  let clock: number;
  let executions: number;
  let failNext: boolean;

  beforeEach(async () => {
    clock = 1_700_000_000_000;
    executions = 0;
    failNext = false;
    store = new InMemoryIdempotencyStore();
    app = Fastify();
    registerIdempotency(app, store, () => clock);
    app.post('/things', async (request, reply) => {
      executions++;
      await new Promise((resolve) => setTimeout(resolve, 30));
      if (failNext) {
        failNext = false;
        return reply.status(500).send({ error: { code: 'internal_error' } });
      }
      return reply.status(201).send({ id: `thing-${executions}`, body: request.body });
    });
    await app.ready();
  });
  afterEach(() => app.close());

  const post = (key: string, body: unknown = { name: 'a' }) =>
    app.inject({ method: 'POST', url: '/things', headers: { 'idempotency-key': key }, payload: body as object });

  it('runs concurrent duplicates once and replays the first response to the others', async () => {
    const responses = await Promise.all([post('k1'), post('k1'), post('k1')]);
    expect(executions).toBe(1);
    expect(new Set(responses.map((response) => response.body)).size).toBe(1);
    expect(responses.map((response) => response.headers['idempotent-replayed'])).toEqual([undefined, 'true', 'true']);
  });

  it('refuses the same key with another body, and keeps keys of other requests apart', async () => {
    await post('k2', { name: 'a' });
    expect((await post('k2', { name: 'b' })).statusCode).toBe(422);
    expect((await post('k3', { name: 'b' })).statusCode).toBe(201);
    expect(executions).toBe(2);
  });

  it('does not keep a 5xx answer: the retry runs again', async () => {
    failNext = true;
    expect((await post('k4')).statusCode).toBe(500);
    expect((await post('k4')).statusCode).toBe(201);
    expect(executions).toBe(2);
  });

  it('a claim blocks another owner until it is released or lapses', async () => {
    const scope = 'ip:127.0.0.1 POST /things';
    expect(await store.claim(scope, 'k5', { owner: 'a', until: clock + IDEMPOTENCY_CLAIM_MS }, clock)).toBe(true);
    expect(await store.claim(scope, 'k5', { owner: 'b', until: clock + IDEMPOTENCY_CLAIM_MS }, clock)).toBe(false);
    await store.release(scope, 'k5', 'b');
    expect(await store.claim(scope, 'k5', { owner: 'b', until: clock + IDEMPOTENCY_CLAIM_MS }, clock)).toBe(false);
    expect(await store.claim(scope, 'k5', { owner: 'b', until: clock + 2 * IDEMPOTENCY_CLAIM_MS }, clock + IDEMPOTENCY_CLAIM_MS)).toBe(true);
    await store.release(scope, 'k5', 'b');
    expect(await store.claim(scope, 'k5', { owner: 'c', until: clock + 2 * IDEMPOTENCY_CLAIM_MS }, clock)).toBe(true);
  });
});
