import { QuoteFixtures, type Org } from './quotes-fixtures';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

/**
 * GET /api/v1/quotes answered again from a kept body (ListResponses) must never answer what the
 * handler would not: every case below first makes the URL answered once, so that it is kept
 * (embedded read store), then changes something and asks again.
 */
describe('kept list responses: answered again only while nothing changed', () => {
  let app: TestApp;
  let fixtures: QuoteFixtures;
  let org: Org;
  let submissionId: string;

  beforeAll(async () => {
    app = await TestApp.start();
    fixtures = new QuoteFixtures(app);
    org = await fixtures.organization();
    submissionId = await fixtures.submission(org);
    await fixtures.createQuote(org, submissionId);
  });
  afterAll(() => app.close());

  const list = (token: string, url = '/api/v1/quotes?limit=50') => app.request('GET', url, { token });

  it('answers a repeated GET with the same page, headers included', async () => {
    const first = await list(org.apiKey);
    const second = await list(org.apiKey);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(second.headers['x-request-id']).toBeDefined();
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
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
