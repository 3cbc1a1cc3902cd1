import { request as httpRequest } from 'node:http';
import { pause, QuoteFixtures, type Org } from './quotes-fixtures';
import { QuoteQueries } from '@lib/quotes';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

/**
 * GET /api/v1/quotes answered again from a kept body (ListResponses) must never answer what the
 * handler would not: every case below first makes the URL answered once, so that it is kept
 * (embedded read store), then changes something and asks again. Over a real socket: kept pages
 * are answered as requests reach the HTTP server, before Fastify (EarlyListAnswers).
 */
describe('kept list responses: answered again only while nothing changed', () => {
  let app: TestApp;
  let fixtures: QuoteFixtures;
  let org: Org;
  let submissionId: string;
  let pageReads: jest.SpyInstance;
  /** MongoDB gives no change tokens: there every GET reads its page. */
  let keeps: boolean;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.listen();
    pageReads = jest.spyOn(app.get(QuoteQueries), 'list');
    keeps = !app.config.mongodbUrl;
    fixtures = new QuoteFixtures(app);
    org = await fixtures.organization();
    submissionId = await fixtures.submission(org);
    const quoteId = await fixtures.createQuote(org, submissionId);
    // The quote's PDF is made in the background, and its writes change the read store's token:
    // the first cases count page reads, so they start once it is done.
    for (let waited = 0; waited < 15_000; waited += 50) {
      if (['ready', 'failed'].includes((await fixtures.quote(org, quoteId)).pdf.status)) break;
      await pause(50);
    }
  });
  afterAll(() => app.close());

  const list = (token: string, url = '/api/v1/quotes?limit=50') => app.request('GET', url, { token });

  it('answers a repeated GET with the same page and the same headers, without reading it again', async () => {
    const first = await list(org.apiKey);
    const reads = pageReads.mock.calls.length;
    const second = await list(org.apiKey);
    expect(pageReads.mock.calls.length).toBe(keeps ? reads : reads + 1);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    const { date: _first, 'x-request-id': firstId, ...firstHeaders } = first.headers;
    const { date: _second, 'x-request-id': secondId, ...secondHeaders } = second.headers;
    expect(Object.keys(second.headers)).toEqual(Object.keys(first.headers));
    expect(secondHeaders).toEqual(firstHeaders);
    expect(secondHeaders['content-type']).toBe('application/json; charset=utf-8');
    expect(secondId).toMatch(/^[0-9a-f-]{36}$/);
    expect(secondId).not.toBe(firstId);
  });

  it("echoes the caller's X-Request-Id on a kept page", async () => {
    await list(org.apiKey);
    const res = await app.request('GET', '/api/v1/quotes?limit=50', { token: org.apiKey, headers: { 'x-request-id': 'crm-req-17' } });
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('crm-req-17');
  });

  it('counts kept pages in the request metrics under their route', async () => {
    await list(org.apiKey);
    const count = async () => {
      const metrics = (await app.request('GET', '/metrics')).body as string;
      return Number(/^http_requests_total\{method="GET",route="\/api\/v1\/quotes",status="200"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
    };
    const before = await count();
    const reads = pageReads.mock.calls.length;
    await list(org.apiKey);
    await list(org.apiKey);
    expect(pageReads.mock.calls.length).toBe(keeps ? reads : reads + 2);
    expect(await count()).toBe(before + 2);
  });

  it('shows a quote created after the page was kept in the very next GET', async () => {
    const before = await list(org.apiKey);
    await list(org.apiKey);
    const quoteId = await fixtures.createQuote(org, submissionId);
    const after = await list(org.apiKey);
    expect(after.body.data).toHaveLength(before.body.data.length + 1);
    expect(after.body.data[0].id).toBe(quoteId);
  });

  it('shows a change of a listed quote in the very next GET', async () => {
    const before = await list(org.apiKey);
    const quoteId = before.body.data[0].id;
    const patched = await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { externalRef: 'ERP-4711' } });
    expect(patched.status).toBe(200);
    const after = await list(org.apiKey);
    expect(after.body.data[0]).toMatchObject({ id: quoteId, externalRef: 'ERP-4711' });
  });

  it("never answers another organization's kept page for the same URL", async () => {
    const mine = await list(org.apiKey);
    expect(mine.body.data.length).toBeGreaterThan(0);
    const other = await fixtures.organization();
    const theirs = await list(other.apiKey);
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual({ data: [], nextCursor: null });
  });

  it('refuses a revoked key on a URL whose page is kept', async () => {
    const created = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/api-keys`, { token: ADMIN_TOKEN, body: { name: 'temp' } });
    expect((await list(created.body.key)).status).toBe(200);
    await app.request('DELETE', `/admin/v1/organizations/${org.organizationId}/api-keys/${created.body.id}`, { token: ADMIN_TOKEN });
    const res = await list(created.body.key);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });

  it('refuses a key whose organization moved to a plan without API access', async () => {
    const moving = await fixtures.organization();
    expect((await list(moving.apiKey)).status).toBe(200);
    expect((await list(moving.apiKey)).status).toBe(200);
    await app.request('PATCH', `/admin/v1/organizations/${moving.organizationId}`, { token: ADMIN_TOKEN, body: { plan: 'essential' } });
    const res = await list(moving.apiKey);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden_plan');
  });

  it('answers a read-only key of the same organization with the same page', async () => {
    const readOnly = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/api-keys`, { token: ADMIN_TOKEN, body: { name: 'reader', readOnly: true } });
    expect(readOnly.status).toBe(201);
    const full = await list(org.apiKey);
    const read = await list(readOnly.body.key);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(full.body);
  });

  it('still validates a query that was never answered: a bad limit is 422 with its field', async () => {
    await list(org.apiKey);
    const res = await list(org.apiKey, '/api/v1/quotes?limit=500');
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.fields.map((f: { path: string }) => f.path)).toEqual(['limit']);
  });
});

describe('kept list responses under a rate limit', () => {
  let app: TestApp;
  let org: Org;

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_KEY_PER_MIN: '4' });
    await app.listen();
    const fixtures = new QuoteFixtures(app);
    org = await fixtures.organization();
  });
  afterAll(() => app.close());

  it('counts every request once, kept or not, and refuses the one over the limit with the envelope', async () => {
    const responses = [];
    for (let i = 0; i < 5; i++) responses.push(await app.request('GET', '/api/v1/quotes?limit=10', { token: org.apiKey }));
    expect(responses.map((res) => res.status)).toEqual([200, 200, 200, 200, 429]);
    // A minute window may turn over between two requests; then the count starts again.
    const remaining = responses.slice(0, 4).map((res) => Number(res.headers['ratelimit-remaining']));
    for (let i = 1; i < 4; i++) expect([remaining[i - 1] - 1, 3]).toContain(remaining[i]);
    const refused = responses[4];
    expect(refused.body.error.code).toBe('rate_limited');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['x-request-id']).toBeDefined();
  });
});

/**
 * Node keeps the first of repeated Authorization headers, while a proxy or a client's log may
 * read the last: such a request names no one caller. Over a real socket (the injector joins
 * repeated headers into one), on the kept-list path before Fastify and on the framework's.
 */
describe('a request with more than one Authorization header', () => {
  let app: TestApp;
  let base: string;
  let org: Org;
  let other: Org;

  beforeAll(async () => {
    app = await TestApp.start();
    base = await app.listen();
    const fixtures = new QuoteFixtures(app);
    [org, other] = [await fixtures.organization(), await fixtures.organization()];
  });
  afterAll(() => app.close());

  /** A GET with each of `tokens` as an Authorization header of its own. */
  const getWith = (path: string, tokens: string[]) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const request = httpRequest(`${base}${path}`, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
      });
      // An array: one header line each.
      request.setHeader('Authorization', tokens.map((token) => `Bearer ${token}`));
      request.on('error', reject);
      request.end();
    });

  it.each([
    ['the organization', '/api/v1/organization'],
    ['a quote list, kept and answered before Fastify', '/api/v1/quotes?limit=10'],
  ])('is 401 unauthorized for %s, saying why, though each key alone is valid', async (_, path) => {
    for (const tokens of [[org.apiKey], [other.apiKey]]) expect((await getWith(path, tokens)).status).toBe(200);
    // asked twice: the second time the list is kept
    for (let i = 0; i < 2; i++) {
      const res = await getWith(path, [other.apiKey, org.apiKey]);
      expect([res.status, res.body.error]).toEqual([401, { code: 'unauthorized', message: 'Send one Authorization header: this request has more than one.' }]);
    }
  });

  it('is 401 on the admin API too, even with the admin token twice', async () => {
    const res = await getWith(`/admin/v1/organizations/${org.organizationId}`, [ADMIN_TOKEN, ADMIN_TOKEN]);
    expect([res.status, res.body.error.message]).toEqual([401, 'Send one Authorization header: this request has more than one.']);
    expect((await getWith(`/admin/v1/organizations/${org.organizationId}`, [ADMIN_TOKEN])).status).toBe(200);
  });
});
