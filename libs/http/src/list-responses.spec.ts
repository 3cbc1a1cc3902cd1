import Fastify, { type FastifyInstance } from 'fastify';
import type { Caller } from './auth';
import { ListResponses, registerListResponses } from './list-responses';

describe('ListResponses', () => {
  it('answers a kept body while the token is unchanged, and drops it once it changed', () => {
    let token = 'a';
    const pages = new ListResponses();
    pages.remember('org_1', '/api/v1/quotes?limit=2', token, () => token, '{"data":[]}');
    expect(pages.answer('org_1', '/api/v1/quotes?limit=2')?.toString()).toBe('{"data":[]}');
    token = 'b';
    expect(pages.answer('org_1', '/api/v1/quotes?limit=2')).toBeNull();
    token = 'a';
    expect(pages.answer('org_1', '/api/v1/quotes?limit=2')).toBeNull();
  });

  it('keeps pages apart per organization and URL, and keeps nothing without a token', () => {
    const pages = new ListResponses();
    pages.remember('org_1', '/api/v1/quotes', 't', () => 't', 'one');
    pages.remember('org_2', '/api/v1/quotes?limit=5', null, () => null, 'two');
    expect(pages.answer('org_2', '/api/v1/quotes')).toBeNull();
    expect(pages.answer('org_1', '/api/v1/quotes?limit=1')).toBeNull();
    expect(pages.answer('org_2', '/api/v1/quotes?limit=5')).toBeNull();
  });
});

describe('registerListResponses', () => {
  let app: FastifyInstance;
  let handled = 0;
  let token = 't1';
  let caller: Caller = { kind: 'apiKey', organizationId: 'org_1', keyId: 'key_1', readOnly: false, planAllowsApi: true };
  const pages = new ListResponses();

  beforeAll(async () => {
    app = Fastify();
    app.addHook('onRequest', async (request) => {
      request.caller = caller;
    });
    registerListResponses(app, pages);
    app.get('/api/v1/quotes', async (request, reply) => {
      handled++;
      const body = `{"handled":${handled}}`;
      if (caller.kind === 'apiKey') pages.remember(caller.organizationId, request.url, token, () => token, body);
      return reply.type('application/json; charset=utf-8').send(body);
    });
    await app.ready();
  });
  afterAll(() => app.close());

  const get = () => app.inject({ method: 'GET', url: '/api/v1/quotes?limit=3' });

  it('answers a repeated GET without the handler until the token changes', async () => {
    expect((await get()).body).toBe('{"handled":1}');
    const again = await get();
    expect(again.body).toBe('{"handled":1}');
    expect(again.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(handled).toBe(1);
    token = 't2';
    expect((await get()).body).toBe('{"handled":2}');
    expect(handled).toBe(2);
  });

  it('leaves callers that ApiKeyGuard would refuse to the handler', async () => {
    caller = { kind: 'apiKey', organizationId: 'org_1', keyId: 'key_1', readOnly: false, planAllowsApi: false };
    await get();
    expect(handled).toBe(3);
    caller = { kind: 'anonymous' };
    await get();
    expect(handled).toBe(4);
  });

  it('leaves other methods to the handler', async () => {
    caller = { kind: 'apiKey', organizationId: 'org_1', keyId: 'key_1', readOnly: false, planAllowsApi: true };
    const res = await app.inject({ method: 'HEAD', url: '/api/v1/quotes?limit=3' });
    expect(res.statusCode).toBe(200);
    expect(handled).toBe(5);
  });
});
