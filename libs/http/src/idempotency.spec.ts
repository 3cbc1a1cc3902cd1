import Fastify, { FastifyInstance } from 'fastify';
import { carriesIdempotencyKey, IDEMPOTENCY_CLAIM_MS, InMemoryIdempotencyStore, registerIdempotency } from './idempotency';

describe('Idempotency-Key in one gateway (in-memory store)', () => {
  let app: FastifyInstance;
  let store: InMemoryIdempotencyStore;
  let clock: number;
  let executions: number;
  /** the error the next request answers with, instead of 201 */
  let failNext: { status: number; code: string; details?: Record<string, unknown> } | null;

  beforeEach(async () => {
    clock = 1_700_000_000_000;
    executions = 0;
    failNext = null;
    store = new InMemoryIdempotencyStore();
    app = Fastify();
    const replayOrClaim = registerIdempotency(app, store, () => clock);
    // Where IdempotencyGuard runs it in the application: once the request is authorized.
    app.addHook('preHandler', async (request, reply) => {
      if (carriesIdempotencyKey(request) && (await replayOrClaim(request, reply))) return reply;
    });
    app.post('/things', async (request, reply) => {
      executions++;
      await new Promise((resolve) => setTimeout(resolve, 30));
      if (failNext) {
        const { status, code, details } = failNext;
        failNext = null;
        return reply.status(status).send({ error: { code, message: code, ...(details && { details }) } });
      }
      return reply.status(201).send({ id: `thing-${executions}`, body: request.body });
    });
    app.post('/things/:thingId/send', async () => {
      executions++;
      return { sent: executions };
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

  it('scopes a key to the resource the router read, not to the raw URL: a query string or an escaped id is the same request', async () => {
    const send = (url: string, key = 'k9') => app.inject({ method: 'POST', url, headers: { 'idempotency-key': key }, payload: {} });
    const first = await send('/things/t_1/send');
    for (const url of ['/things/t_1/send?', '/things/t_1/send?retry=1', '/things/t%5F1/send', '/things/%74_1/send?x']) {
      const again = await send(url);
      expect([url, again.headers['idempotent-replayed'], again.body]).toEqual([url, 'true', first.body]);
    }
    // Another resource, or another key, is another request.
    expect((await send('/things/t_2/send')).headers['idempotent-replayed']).toBeUndefined();
    expect((await send('/things/t_1/send', 'k10')).headers['idempotent-replayed']).toBeUndefined();
    expect(executions).toBe(3);
  });

  it('refuses the same key with another body, and keeps keys of other requests apart', async () => {
    await post('k2', { name: 'a' });
    expect((await post('k2', { name: 'b' })).statusCode).toBe(422);
    expect((await post('k3', { name: 'b' })).statusCode).toBe(201);
    expect(executions).toBe(2);
  });

  it.each([
    [500, 'internal_error'],
    [503, 'unavailable'],
    [401, 'unauthorized'],
    [403, 'read_only_key'],
    [429, 'rate_limited'],
    [409, 'conflict'],
  ])('does not keep a %i %s: the retry with the same key runs again', async (status, code) => {
    failNext = { status, code };
    expect((await post('k4')).statusCode).toBe(status);
    const retry = await post('k4');
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(executions).toBe(2);
  });

  it('keeps a 409 that is the outcome of the request, not a conflict to retry', async () => {
    failNext = { status: 409, code: 'quote_not_sendable' };
    expect((await post('k6')).statusCode).toBe(409);
    const again = await post('k6');
    expect(again.statusCode).toBe(409);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(executions).toBe(1);
  });

  it('keeps the 503 of a write that is stored but not yet readable: the retry is told so again and writes nothing', async () => {
    failNext = { status: 503, code: 'unavailable', details: { writeStored: true } };
    const first = await post('k7');
    expect(first.statusCode).toBe(503);
    const again = await post('k7');
    expect(again.statusCode).toBe(503);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual({ error: { code: 'unavailable', message: 'unavailable', details: { writeStored: true } } });
    expect(executions).toBe(1);
  });

  it('answers what the request did when its answer cannot be stored under the key, not a 500', async () => {
    jest.spyOn(store, 'put').mockRejectedValueOnce(new Error('SQLITE_BUSY: database is locked'));
    const first = await post('k8');
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ id: 'thing-1' });
    // Nothing was stored, and the claim was given up: a retry runs again rather than waiting for good.
    expect((await post('k8')).json()).toMatchObject({ id: 'thing-2' });
  });

  it('renews the claim of a request running longer than a claim holds: a duplicate on another gateway waits for its answer, then replays it', async () => {
    let finish!: () => void;
    const gateway = (name: string) => {
      const instance = Fastify();
      const replayOrClaim = registerIdempotency(instance, store, () => clock, 5);
      instance.addHook('preHandler', async (request, reply) => {
        if (carriesIdempotencyKey(request) && (await replayOrClaim(request, reply))) return reply;
      });
      instance.post('/slow', async (_request, reply) => {
        executions++;
        await new Promise<void>((resolve) => (finish = resolve));
        return reply.status(201).send({ by: name });
      });
      return instance;
    };
    const [first, second] = [gateway('first'), gateway('second')];
    try {
      const slow = (instance: FastifyInstance) => instance.inject({ method: 'POST', url: '/slow', headers: { 'idempotency-key': 'k11' }, payload: {} });
      const running = slow(first);
      while (executions === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      // Far past the claim's first lapse: only its renewals keep it.
      clock += IDEMPOTENCY_CLAIM_MS * 3;
      await new Promise((resolve) => setTimeout(resolve, 30));
      const duplicate = slow(second);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(executions).toBe(1);
      finish();
      expect((await running).json()).toEqual({ by: 'first' });
      const replayed = await duplicate;
      expect([replayed.headers['idempotent-replayed'], replayed.json()]).toEqual(['true', { by: 'first' }]);
      expect(executions).toBe(1);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
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
