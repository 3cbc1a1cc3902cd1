import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { ApiKeyIdentity } from './auth';
import { EarlyListAnswers, ListResponses, type EarlyListAnswerServices } from './list-responses';
import type { RateDecision } from './rate-limit';

describe('ListResponses', () => {
  it('answers a kept body while the token is unchanged, and drops it once it changed', () => {
    let token = 'a';
    const pages = new ListResponses();
    pages.remember('org_1', '/api/v1/quotes?limit=2', '/api/v1/quotes', token, () => token, '{"data":[]}');
    expect(pages.answer('org_1', '/api/v1/quotes?limit=2')).toEqual({ body: Buffer.from('{"data":[]}'), route: '/api/v1/quotes', token: 'a', currentToken: expect.any(Function) });
    token = 'b';
    expect(pages.answer('org_1', '/api/v1/quotes?limit=2')).toBeNull();
    token = 'a';
    expect(pages.answer('org_1', '/api/v1/quotes?limit=2')).toBeNull();
  });

  it('keeps pages apart per organization and URL, and keeps nothing without a token', () => {
    const pages = new ListResponses();
    pages.remember('org_1', '/api/v1/quotes', '/api/v1/quotes', 't', () => 't', 'one');
    pages.remember('org_2', '/api/v1/quotes?limit=5', '/api/v1/quotes', null, () => null, 'two');
    expect(pages.answer('org_2', '/api/v1/quotes')).toBeNull();
    expect(pages.answer('org_1', '/api/v1/quotes?limit=1')).toBeNull();
    expect(pages.answer('org_2', '/api/v1/quotes?limit=5')).toBeNull();
  });
});

describe('EarlyListAnswers', () => {
  const KEY = 'qk_live_key1';
  const identity: ApiKeyIdentity = { organizationId: 'org_1', keyId: 'key_1', readOnly: true, planAllowsApi: true };
  let server: Server;
  let base: string;
  let early: EarlyListAnswers;
  let caller: ApiKeyIdentity | null | undefined;
  let decision: RateDecision | null;
  let token: string;
  let passedOn: string[];
  let answered: Array<{ requestId: string; route: string; statusCode: number }>;

  beforeEach(async () => {
    caller = identity;
    decision = null;
    token = 't1';
    passedOn = [];
    answered = [];
    const pages = new ListResponses();
    pages.remember('org_1', '/api/v1/quotes?limit=3', '/api/v1/quotes', 't1', () => token, '{"data":["kept"]}');
    early = new EarlyListAnswers();
    const services: EarlyListAnswerServices = {
      pages,
      keptApiKey: (rawKey) => (rawKey === KEY ? caller : null),
      rateLimit: () => decision,
      requestId: (request: IncomingMessage) => String(request.headers['x-request-id'] ?? 'generated'),
      answered: (_request, requestId, page, statusCode) => answered.push({ requestId, route: page.route, statusCode }),
    };
    early.enable(services);
    server = createServer((request, response) => {
      if (early.answer(request, response)) return;
      passedOn.push(request.url!);
      response.writeHead(299).end('framework');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterEach(() => new Promise((resolve) => server.close(resolve)));

  const get = (path = '/api/v1/quotes?limit=3', headers: Record<string, string> = { authorization: `Bearer ${KEY}`, 'x-request-id': 'r-1' }, method = 'GET') =>
    fetch(base + path, { method, headers }).then(async (res) => ({ status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() }));

  it('answers a kept page with its headers, and reports the answer once it is sent', async () => {
    const res = await get();
    expect(res).toMatchObject({ status: 200, body: '{"data":["kept"]}' });
    expect(res.headers).toMatchObject({ 'x-request-id': 'r-1', 'content-type': 'application/json; charset=utf-8', 'content-length': '17' });
    expect(res.headers['ratelimit-limit']).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toEqual([{ requestId: 'r-1', route: '/api/v1/quotes', statusCode: 200 }]);
    expect(passedOn).toEqual([]);
  });

  it('sends the rate-limit headers of the counted hit', async () => {
    decision = { allowed: true, limit: 120, remaining: 7, resetSeconds: 42 };
    const res = await get();
    expect(res.headers).toMatchObject({ 'ratelimit-limit': '120', 'ratelimit-remaining': '7', 'ratelimit-reset': '42' });
  });

  it('leaves a hit over the rate limit to the framework, which refuses it', async () => {
    decision = { allowed: false, limit: 120, remaining: 0, resetSeconds: 42 };
    expect((await get()).status).toBe(299);
    expect(passedOn).toEqual(['/api/v1/quotes?limit=3']);
  });

  it.each([
    ['another method', () => get(undefined, undefined, 'HEAD')],
    ['a URL outside the API', () => get('/admin/v1/quotes?limit=3')],
    ['a URL not kept', () => get('/api/v1/quotes?limit=4')],
    ['no credentials', () => get(undefined, {})],
    ['another scheme', () => get(undefined, { authorization: `Basic ${KEY}` })],
    ['an unknown key', () => get(undefined, { authorization: 'Bearer qk_live_other' })],
  ])('leaves %s to the framework', async (_case, request) => {
    expect((await request()).status).toBe(299);
    expect(passedOn).toHaveLength(1);
    expect(answered).toEqual([]);
  });

  it('leaves a key whose resolution is not kept, or whose plan has no API access, to the framework', async () => {
    caller = undefined;
    expect((await get()).status).toBe(299);
    caller = { ...identity, planAllowsApi: false };
    expect((await get()).status).toBe(299);
    expect(passedOn).toHaveLength(2);
  });

  it('leaves a page whose read model changed to the framework', async () => {
    token = 't2';
    expect((await get()).status).toBe(299);
  });

  it('leaves everything to the framework once closing, and before it is enabled', async () => {
    early.close();
    expect((await get()).status).toBe(299);
    const idle = new EarlyListAnswers();
    expect(idle.answer({ method: 'GET', url: '/api/v1/quotes?limit=3', headers: { authorization: `Bearer ${KEY}` } } as IncomingMessage, null as never)).toBe(false);
  });
});
