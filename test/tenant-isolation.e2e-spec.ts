import { parse } from 'yaml';
import { QuoteFixtures, pause, type Org } from './quotes-fixtures';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

/**
 * Every endpoint of the external API, called with another organization's key and this
 * organization's ids: 404 `not_found`, never data, and nothing changes. The operations come from
 * the served OpenAPI document, so a new endpoint without a case here fails the test.
 */
describe('tenant isolation', () => {
  let app: TestApp;
  let f: QuoteFixtures;
  let owner: Org;
  let intruder: Org;
  const ids: Record<string, string> = {};

  /** Bodies a write would accept if the id were the caller's own: the refusal must be the 404. */
  const bodies: Record<string, unknown> = {
    'PATCH /api/v1/submissions/{id}': { status: 'closed', externalRef: 'stolen' },
    'POST /api/v1/submissions/{id}/quotes': {},
    'PATCH /api/v1/quotes/{id}': { notes: 'stolen', revise: true },
    'PUT /api/v1/quotes/{id}/line-items': { lineItems: [{ description: 'stolen', quantity: 1, unitPrice: 1 }], revise: true },
    'POST /api/v1/quotes/{id}/send': { recipients: ['mallory@example.com'] },
    'PATCH /api/v1/contacts/{id}': { name: 'stolen' },
    'POST /api/v1/events/{id}/redeliver': undefined,
  };

  beforeAll(async () => {
    app = await TestApp.start({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE_MS: '0,600000' });
    f = new QuoteFixtures(app);
    // the owner's deliveries go to a port nothing listens on: they exist in the log, pending a retry
    owner = await f.organization({ settings: { webhookUrl: 'http://127.0.0.1:9/hooks' } });
    intruder = await f.organization();
    ids.submission = await f.submission(owner);
    ids.quote = await f.createQuote(owner, ids.submission);
    await f.send(owner, ids.quote);
    ids.contact = (await app.request('POST', '/api/v1/contacts', { token: owner.apiKey, body: { email: 'owner-customer@example.com', name: 'Owner customer' } })).body.id;
    ids.lead = (await app.request('POST', `/storefront/v1/${owner.slug}/leads`, { body: { name: 'Lee', email: 'lee@example.com', message: 'Call me' } })).body.id;
    ids.template = owner.templateId;
    for (let i = 0; i < 100 && !ids.event; i++) {
      ids.event = (await app.request('GET', '/api/v1/events', { token: owner.apiKey })).body.data[0]?.id;
      if (!ids.event) await pause(50);
    }
    expect(Object.values(ids).every(Boolean)).toBe(true);
  });
  afterAll(() => app.close());

  async function operations(): Promise<Array<{ method: string; path: string }>> {
    const document = parse((await app.request('GET', '/openapi.yaml')).body as string);
    return Object.entries(document.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith('/api/v1/') && !path.startsWith('/api/v1/configuration-sessions'))
      .flatMap(([path, item]) => Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).map((m) => ({ method: m.toUpperCase(), path })));
  }

  /** The owner's id for the resource a path names: /quotes/{id} → the quote. */
  function ownerUrl(path: string): string {
    const resource = path.split('/')[3];
    const kind = ({ submissions: 'submission', quotes: 'quote', contacts: 'contact', leads: 'lead', templates: 'template', events: 'event' } as Record<string, string>)[resource];
    return path.replace(/\{[^}]+\}/, () => {
      if (!kind) throw new Error(`no owner id for ${path}: add the resource to this test`);
      return ids[kind];
    });
  }

  const snapshot = async () =>
    JSON.stringify(
      await Promise.all(
        [`/api/v1/submissions/${ids.submission}`, `/api/v1/quotes/${ids.quote}`, `/api/v1/contacts/${ids.contact}`, `/api/v1/leads/${ids.lead}`, `/api/v1/quotes/${ids.quote}/versions`].map(
          // without `pdf`: its status moves on its own and its link is new on every read
          async (url) => ({ ...(await app.request('GET', url, { token: owner.apiKey })).body, pdf: undefined }),
        ),
      ),
    );

  it('answers every endpoint that names an id of another organization with 404 not_found, and changes nothing', async () => {
    const before = await snapshot();
    const withIds = (await operations()).filter((op) => op.path.includes('{'));
    expect(withIds.length).toBeGreaterThanOrEqual(14);
    for (const op of withIds) {
      const key = `${op.method} ${op.path.replace(/\{[^}]+\}/, '{id}')}`;
      const response = await app.request(op.method, ownerUrl(op.path), { token: intruder.apiKey, body: op.method === 'GET' ? undefined : bodies[key] });
      expect({ key, status: response.status, code: response.body?.error?.code }).toEqual({ key, status: 404, code: 'not_found' });
      for (const id of Object.values(ids)) expect(JSON.stringify(response.body).replace(ownerUrl(op.path), '')).not.toContain(id);
    }
    expect(await snapshot()).toBe(before);
  });

  it('lists and the organization endpoint show none of another organization\'s records', async () => {
    const lists = (await operations()).filter((op) => op.method === 'GET' && !op.path.includes('{'));
    expect(lists.map((op) => op.path)).toEqual(expect.arrayContaining(['/api/v1/submissions', '/api/v1/quotes', '/api/v1/contacts', '/api/v1/leads', '/api/v1/templates', '/api/v1/events', '/api/v1/organization']));
    for (const op of lists) {
      const response = await app.request('GET', op.path, { token: intruder.apiKey });
      expect({ path: op.path, status: response.status }).toEqual({ path: op.path, status: 200 });
      const text = JSON.stringify(response.body);
      for (const id of [...Object.values(ids), owner.organizationId]) expect(text).not.toContain(id);
    }
  });

  it('the admin API is closed to API keys', async () => {
    const response = await app.request('GET', `/admin/v1/organizations/${owner.organizationId}`, { token: intruder.apiKey });
    expect(response.status).toBe(401);
    expect((await app.request('GET', `/admin/v1/organizations/${owner.organizationId}`, { token: ADMIN_TOKEN })).status).toBe(200);
  });

  it('a customer token opens its own session only', async () => {
    const start = async () => (await app.request('POST', `/storefront/v1/${owner.slug}/sessions`, { body: { templateId: owner.templateId } })).body;
    const [mine, theirs] = [await start(), await start()];
    expect((await app.request('GET', `/storefront/v1/sessions/${mine.sessionId}`, { token: mine.customerToken })).status).toBe(200);
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PUT', '/configuration', { width: 1000 }],
      ['POST', '/submit', { customer: { name: 'Mallory', email: 'm@example.com' } }],
      ['GET', '/stream', undefined],
    ] as const) {
      const response = await app.request(method, `/storefront/v1/sessions/${theirs.sessionId}${suffix}`, { token: mine.customerToken, body });
      expect({ suffix, refused: [401, 404].includes(response.status) }).toEqual({ suffix, refused: true });
      expect(JSON.stringify(response.body)).not.toContain(theirs.sessionId.slice(4));
    }
    const after = await app.request('GET', `/storefront/v1/sessions/${theirs.sessionId}`, { token: theirs.customerToken });
    expect(after.status).toBe(200);
    expect(after.body.status).toBe('active');
  });
});
