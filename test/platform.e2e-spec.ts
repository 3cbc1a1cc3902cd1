import { Writable } from 'node:stream';
import { EventStore } from '@lib/event-store';
import { createLogger, flushRequestLines } from '@lib/observability';
import { QuoteFixtures } from './quotes-fixtures';
import { BODIES_REFUSED } from './support/refused-bodies';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

describe('platform: authentication, errors and limits over HTTP', () => {
  let app: TestApp;
  let org: Awaited<ReturnType<TestApp['createOrganization']>>;

  beforeAll(async () => {
    app = await TestApp.start();
    org = await app.createOrganization();
  });
  afterAll(() => app.close());

  describe('API keys', () => {
    it('returns the calling organization for a valid key', async () => {
      const res = await app.request('GET', '/api/v1/organization', { token: org.apiKey });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: org.organizationId,
        name: `Org ${org.slug}`,
        slug: org.slug,
        locale: 'en',
        unitSystem: 'metric',
        currency: 'EUR',
        plan: 'pro',
        externalPricingEnabled: false,
      });
    });

    it.each([
      ['no header', undefined],
      ['a malformed key', 'not-a-key'],
      ['an unknown key', `qk_live_${'x'.repeat(40)}`],
    ])('answers 401 unauthorized with WWW-Authenticate for %s', async (_, token) => {
      const res = await app.request('GET', '/api/v1/organization', { token });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body.error.code).toBe('unauthorized');
      expect(typeof res.body.error.message).toBe('string');
    });

    it('rejects a revoked key', async () => {
      const created = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/api-keys`, { token: ADMIN_TOKEN, body: { name: 'temp' } });
      expect(created.status).toBe(201);
      expect(created.body.key).toMatch(/^qk_live_[0-9A-Za-z]{32,}$/);
      expect((await app.request('GET', '/api/v1/organization', { token: created.body.key })).status).toBe(200);
      const revoked = await app.request('DELETE', `/admin/v1/organizations/${org.organizationId}/api-keys/${created.body.id}`, { token: ADMIN_TOKEN });
      expect(revoked.status).toBe(204);
      const res = await app.request('GET', '/api/v1/organization', { token: created.body.key });
      expect(res.status).toBe(401);
    });

    it('refuses a key that worked a moment ago once its organization moves to a plan without API access', async () => {
      const moving = await app.createOrganization();
      expect((await app.request('GET', '/api/v1/organization', { token: moving.apiKey })).status).toBe(200);
      const patched = await app.request('PATCH', `/admin/v1/organizations/${moving.organizationId}`, { token: ADMIN_TOKEN, body: { plan: 'essential' } });
      expect(patched.status).toBe(200);
      const res = await app.request('GET', '/api/v1/organization', { token: moving.apiKey });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden_plan');
    });

    it('lets a read-only key read but not write', async () => {
      expect((await app.request('GET', '/api/v1/organization', { token: org.readOnlyKey })).status).toBe(200);
      const res = await app.request('POST', '/api/v1/contacts', { token: org.readOnlyKey, body: { email: 'a@example.com' } });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('read_only_key');
    });

    it('refuses keys of organizations on plans without API access', async () => {
      const free = await app.createOrganization({ plan: 'essential' });
      const res = await app.request('GET', '/api/v1/organization', { token: free.apiKey });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden_plan');
      const create = await app.request('POST', `/admin/v1/organizations/${free.organizationId}/api-keys`, { token: ADMIN_TOKEN, body: { name: 'x' } });
      expect(create.status).toBe(403);
      expect(create.body.error.code).toBe('forbidden_plan');
    });
  });

  describe('error envelope', () => {
    it.each([
      ['a full disk (SQLite)', Object.assign(new Error('database or disk is full'), { name: 'SqliteError', code: 'SQLITE_FULL' })],
      ['a read-only store (SQLite)', Object.assign(new Error('disk I/O error'), { name: 'SqliteError', code: 'SQLITE_IOERR_WRITE' })],
      ['a full file system', Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })],
      ['an unreachable MongoDB', Object.assign(new Error('connection refused'), { name: 'MongoServerSelectionError' })],
      ['an unreachable Kafka', Object.assign(new Error('Connection error'), { name: 'KafkaJSConnectionError' })],
    ])('answers a write that %s refuses with 503 unavailable and Retry-After, not 500, stores nothing, and counts it by code', async (_what, failure) => {
      const events = app.get(EventStore);
      const code = (failure as { code?: string }).code ?? failure.name;
      const counted = async () => Number(new RegExp(`^store_unavailable_answers_total\\{code="${code}"\\} (\\d+)$`, 'm').exec((await app.request('GET', '/metrics')).body as string)?.[1] ?? 0);
      const countedBefore = await counted();
      const refused = jest.spyOn(events, 'appendToStream').mockRejectedValueOnce(failure);
      const before = (await app.request('GET', '/api/v1/leads?limit=100', { token: org.apiKey })).body.data.length;
      try {
        const res = await app.request('POST', `/storefront/v1/${org.slug}/leads`, { body: { name: 'Ada', email: 'ada@example.com', message: 'Three windows, please.' } });
        expect([res.status, res.body.error.code, res.headers['retry-after']]).toEqual([503, 'unavailable', '5']);
      } finally {
        refused.mockRestore();
      }
      expect((await app.request('GET', '/api/v1/leads?limit=100', { token: org.apiKey })).body.data).toHaveLength(before);
      expect(await counted()).toBe(countedBefore + 1);
    });

    it('answers a failure of no known engine with 500 internal_error', async () => {
      const refused = jest.spyOn(app.get(EventStore), 'appendToStream').mockRejectedValueOnce(Object.assign(new Error('constraint failed'), { code: 'SQLITE_CONSTRAINT' }));
      try {
        const res = await app.request('POST', `/storefront/v1/${org.slug}/leads`, { body: { name: 'Ada', email: 'ada@example.com', message: 'Three windows, please.' } });
        expect([res.status, res.body.error.code, res.headers['retry-after']]).toEqual([500, 'internal_error', undefined]);
      } finally {
        refused.mockRestore();
      }
    });

    it('answers unknown routes with 404 not_found', async () => {
      const res = await app.request('GET', '/api/v1/nothing-here', { token: org.apiKey });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    });

    it.each([
      ['text', { payload: 'hello', headers: { 'content-type': 'text/plain' } }],
      ['XML', { payload: '<a/>', headers: { 'content-type': 'application/xml' } }],
      ['unparseable JSON', { payload: '{x', headers: { 'content-type': 'application/json' } }],
      ['a JSON array', { body: [] }],
    ])('answers an unknown route 404 whatever its body: %s', async (_what, options) => {
      const res = await app.request('POST', '/api/v1/nothing-here', { token: org.apiKey, ...options });
      expect([res.status, res.body.error?.code]).toEqual([404, 'not_found']);
    });

    it.each([
      ['no key', undefined, 401, 'unauthorized'],
      ['a read-only key', 'readOnly', 403, 'read_only_key'],
    ] as const)('refuses %s before it reads the body', async (_what, key, status, code) => {
      const token = key === 'readOnly' ? org.readOnlyKey : undefined;
      for (const options of [
        { payload: 'hello', headers: { 'content-type': 'text/plain' } },
        { payload: '{x', headers: { 'content-type': 'application/json' } },
        { body: [] },
        { body: { name: 'Ada' } },
      ]) {
        const res = await app.request('POST', '/api/v1/contacts', { token, ...options });
        expect([res.status, res.body.error?.code]).toEqual([status, code]);
        if (status === 401) expect(res.headers['www-authenticate']).toBe('Bearer');
      }
    });

    it('answers unparseable JSON with 400 invalid_json', async () => {
      const res = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, payload: '{"name": ', headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_json');
    });

    it('answers a body over 1 MiB with 413 payload_too_large', async () => {
      const res = await app.request('POST', '/admin/v1/organizations', {
        token: ADMIN_TOKEN,
        payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), slug: 'big' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('payload_too_large');
    });

    it('answers a non-JSON write with 415 unsupported_media_type', async () => {
      const res = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, payload: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(res.status).toBe(415);
      expect(res.body.error.code).toBe('unsupported_media_type');
    });

    it('answers invalid bodies with 422 and field paths, storing nothing', async () => {
      const res = await app.request('POST', '/admin/v1/organizations', {
        token: ADMIN_TOKEN,
        body: { name: '', slug: 'Not A Slug', currency: 'euro', settings: { quoteDefaults: { taxRate: -1 } }, extra: true },
      });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      const paths = res.body.error.details.fields.map((f: { path: string }) => f.path);
      expect(paths).toEqual(expect.arrayContaining(['name', 'slug', 'currency', 'settings.quoteDefaults.taxRate', 'extra']));
    });

    it('rounds the default tax rate to 4 decimals as quotes do, so float noise is taken and a quote gets the same rate', async () => {
      const { organizationId } = await app.createOrganization();
      const patch = (taxRate: number) => app.request('PATCH', `/admin/v1/organizations/${organizationId}`, { token: ADMIN_TOKEN, body: { settings: { quoteDefaults: { taxRate } } } });
      for (const [sent, stored] of [[0.07 * 100, 7], [19.00005, 19.0001], [1e-5, 0]]) {
        const res = await patch(sent);
        expect([res.status, res.body.settings.quoteDefaults.taxRate]).toEqual([200, stored]);
      }
      for (const refused of [-1e-9, 100.00005]) expect((await patch(refused)).status).toBe(422);
    });

    it('refuses null for an organization field that cannot be empty, on create and on change, and stores nothing', async () => {
      const created = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body: { name: 'Null BV', slug: 'null-bv', settings: { pricingTimeoutMs: null } } });
      const pathsOf = (res: { body: any }) => [...new Set<string>(res.body.error?.details.fields.map((f: { path: string }) => f.path))].sort();
      expect([created.status, pathsOf(created)]).toEqual([422, ['settings.pricingTimeoutMs']]);
      const { organizationId } = await app.createOrganization();
      const before = (await app.request('GET', `/admin/v1/organizations/${organizationId}`, { token: ADMIN_TOKEN })).body;
      for (const [body, paths] of [
        [{ name: null }, ['name']],
        [{ locale: null, currency: null, plan: null, unitSystem: null }, ['locale', 'unitSystem', 'currency', 'plan']],
        [{ settings: { externalPricingEnabled: null, pricingTimeoutMs: null, quoteDefaults: { taxRate: null } } }, ['settings.externalPricingEnabled', 'settings.pricingTimeoutMs', 'settings.quoteDefaults.taxRate']],
        [{ settings: null }, ['settings']],
      ] as const) {
        const res = await app.request('PATCH', `/admin/v1/organizations/${organizationId}`, { token: ADMIN_TOKEN, body });
        expect([res.status, res.body.error?.code, pathsOf(res)]).toEqual([422, 'validation_error', [...paths].sort()]);
      }
      expect((await app.request('GET', `/admin/v1/organizations/${organizationId}`, { token: ADMIN_TOKEN })).body).toEqual(before);
      // A webhook URL may still be cleared with null.
      const cleared = await app.request('PATCH', `/admin/v1/organizations/${organizationId}`, { token: ADMIN_TOKEN, body: { settings: { webhookUrl: null } } });
      expect(cleared.status).toBe(200);
    });

    it('takes only ISO 4217 currencies for an organization: ZZZ is 422 on create and on change, and nothing is stored', async () => {
      const created = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body: { name: 'Kozijn BV', slug: 'kozijn-bv', currency: 'ZZZ' } });
      expect([created.status, created.body.error.details.fields]).toEqual([422, [{ path: 'currency', message: 'currency must be an ISO 4217 code such as EUR' }]]);
      const { organizationId } = await app.createOrganization();
      const changed = await app.request('PATCH', `/admin/v1/organizations/${organizationId}`, { token: ADMIN_TOKEN, body: { currency: 'ZZZ' } });
      expect([changed.status, changed.body.error?.code]).toEqual([422, 'validation_error']);
      const stored = await app.request('GET', `/admin/v1/organizations/${organizationId}`, { token: ADMIN_TOKEN });
      expect(stored.body.currency).toBe('EUR');
      const chf = await app.request('PATCH', `/admin/v1/organizations/${organizationId}`, { token: ADMIN_TOKEN, body: { currency: 'CHF' } });
      expect([chf.status, chf.body.currency]).toEqual([200, 'CHF']);
    });
  });

  it.each([
    ['an array', [1, 2]],
    ['a string', 'text'],
    ['a number', 42],
    ['null', null],
    ['an object where an array belongs', { email: 'x@example.com', name: { first: 'x' } }],
  ])('answers a body that is %s with 422, never 500', async (_, body) => {
    const res = await app.request('POST', '/api/v1/contacts', { token: org.apiKey, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_error');
  });

  describe('admin API', () => {
    it('requires the admin token', async () => {
      const res = await app.request('POST', '/admin/v1/organizations', { token: org.apiKey, body: { name: 'x', slug: 'x' } });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    });

    it('refuses a caller without the admin token before reading the body: 401 whatever the body, the admin gets the body refused', async () => {
      for (const [body, own] of BODIES_REFUSED) {
        for (const token of [undefined, org.apiKey]) {
          const res = await app.request('POST', '/admin/v1/organizations', { ...body, headers: { ...body.headers, ...(token && { authorization: `Bearer ${token}` }) } });
          expect([own, res.status, res.body.error?.code]).toEqual([own, 401, 'unauthorized']);
        }
        const admin = await app.request('POST', '/admin/v1/organizations', { ...body, headers: { ...body.headers, authorization: `Bearer ${ADMIN_TOKEN}` } });
        expect([own, admin.body.error?.code]).toEqual([own, own]);
      }
    });

    it('refuses a name that is empty once its HTML and blanks are stripped: organization create and update, API key', async () => {
      for (const name of ['   ', '<b></b>', ' <i> </i> ']) {
        const created = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body: { name, slug: `blank-${Date.now()}` } });
        expect([created.status, created.body.error.details.fields.map((f: { path: string }) => f.path)]).toEqual([422, ['name']]);
        const renamed = await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN, body: { name } });
        expect([renamed.status, renamed.body.error.details.fields.map((f: { path: string }) => f.path)]).toEqual([422, ['name']]);
        const key = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/api-keys`, { token: ADMIN_TOKEN, body: { name } });
        expect([key.status, key.body.error.details.fields.map((f: { path: string }) => f.path)]).toEqual([422, ['name']]);
      }
      const stored = await app.request('GET', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN });
      expect(stored.body.name).not.toBe('');
      const key = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/api-keys`, { token: ADMIN_TOKEN, body: { name: ' <b>CRM</b> sync ' } });
      expect([key.status, key.body.name]).toEqual([201, 'CRM sync']);
      await app.request('DELETE', `/admin/v1/organizations/${org.organizationId}/api-keys/${key.body.id}`, { token: ADMIN_TOKEN });
    });

    it('creates, reads and updates an organization with its settings', async () => {
      const created = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body: { name: 'Fenster <b>GmbH</b>', slug: 'fenster-gmbh', locale: 'de', currency: 'EUR' } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: 'Fenster GmbH', slug: 'fenster-gmbh', locale: 'de', unitSystem: 'metric', plan: 'pro', externalPricingEnabled: false });
      expect(created.body.settings).toMatchObject({ webhookUrl: null, pricingWebhookUrl: null, externalPricingEnabled: false, pricingTimeoutMs: 10000, quoteDefaults: { taxRate: 0, validityDays: 30 } });

      const duplicate = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body: { name: 'Other', slug: 'fenster-gmbh' } });
      expect(duplicate.status).toBe(422);
      expect(duplicate.body.error.details.fields[0].path).toBe('slug');

      const id = created.body.id;
      const patched = await app.request('PATCH', `/admin/v1/organizations/${id}`, {
        token: ADMIN_TOKEN,
        body: { unitSystem: 'imperial', settings: { webhookUrl: 'https://crm.example.com/hooks', externalPricingEnabled: true, quoteDefaults: { taxRate: 19 } } },
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ unitSystem: 'imperial', externalPricingEnabled: true });
      expect(patched.body.settings).toMatchObject({ webhookUrl: 'https://crm.example.com/hooks', quoteDefaults: { taxRate: 19, validityDays: 30 }, signingSecretConfigured: true });
      // this change minted the signing secret: its answer alone shows it
      const { signingSecret, ...settings } = patched.body.settings;
      expect(signingSecret).toMatch(/^whsec_/);
      expect((await app.request('GET', `/admin/v1/organizations/${id}`, { token: ADMIN_TOKEN })).body).toEqual({ ...patched.body, settings });
    });

    it('shows the signing secret that enabling live pricing mints in that answer only: never in GET, a repeat of the request or a later change', async () => {
      const fresh = await app.createOrganization();
      const path = `/admin/v1/organizations/${fresh.organizationId}`;
      const enable = { token: ADMIN_TOKEN, headers: { 'idempotency-key': `enable-${fresh.organizationId}` }, body: { settings: { externalPricingEnabled: true } } };
      const renamed = await app.request('PATCH', path, { token: ADMIN_TOKEN, body: { name: 'No secret needed' } });
      expect(renamed.body.settings).toEqual(expect.objectContaining({ signingSecretConfigured: false }));
      expect(renamed.body.settings).not.toHaveProperty('signingSecret');

      const enabled = await app.request('PATCH', path, enable);
      expect(enabled.status).toBe(200);
      expect(enabled.body.settings).toMatchObject({ externalPricingEnabled: true, signingSecretConfigured: true, signingSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]{40,}$/) });
      const { signingSecret, ...settings } = enabled.body.settings;

      const read = await app.request('GET', path, { token: ADMIN_TOKEN });
      expect(read.body).toEqual({ ...enabled.body, settings });
      // Only POSTs are replayed under an Idempotency-Key: the same PATCH again is run again, and mints nothing.
      const repeated = await app.request('PATCH', path, enable);
      expect(repeated.status).toBe(200);
      expect(repeated.headers['idempotent-replayed']).toBeUndefined();
      const disabled = await app.request('PATCH', path, { token: ADMIN_TOKEN, body: { settings: { externalPricingEnabled: false } } });
      const reenabled = await app.request('PATCH', path, { token: ADMIN_TOKEN, body: { settings: { externalPricingEnabled: true } } });
      const own = await app.request('GET', '/api/v1/organization', { token: fresh.apiKey });
      for (const answer of [read, repeated, disabled, reenabled, own]) {
        expect(answer.status).toBe(200);
        expect(JSON.stringify(answer.body)).not.toContain(signingSecret);
        expect(JSON.stringify(answer.body)).not.toContain('whsec_');
      }
    });

    it('shows the signing secret that a creation with live pricing or a webhook URL mints in its answer only: a replay under the same key leaves it out', async () => {
      const create = (slug: string, settings: Record<string, unknown>) => ({ token: ADMIN_TOKEN, headers: { 'idempotency-key': `create-${slug}` }, body: { name: slug, slug, settings } });
      const live = create('live-from-the-start', { externalPricingEnabled: true });
      const created = await app.request('POST', '/admin/v1/organizations', live);
      expect(created.status).toBe(201);
      expect(created.body.settings).toMatchObject({ externalPricingEnabled: true, signingSecretConfigured: true, signingSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]{40,}$/) });
      const { signingSecret, ...settings } = created.body.settings;

      const replayed = await app.request('POST', '/admin/v1/organizations', live);
      expect([replayed.status, replayed.headers['idempotent-replayed']]).toEqual([201, 'true']);
      expect(replayed.body).toEqual({ ...created.body, settings });
      const read = await app.request('GET', `/admin/v1/organizations/${created.body.id}`, { token: ADMIN_TOKEN });
      expect(read.body).toEqual({ ...created.body, settings });
      const rotated = await app.request('POST', `/admin/v1/organizations/${created.body.id}/signing-secret`, { token: ADMIN_TOKEN });
      expect(rotated.body.secret).not.toBe(signingSecret);

      const hooked = await app.request('POST', '/admin/v1/organizations', create('hooked-from-the-start', { webhookUrl: 'https://crm.example.com/hooks' }));
      expect(hooked.body.settings).toMatchObject({ webhookUrl: 'https://crm.example.com/hooks', signingSecretConfigured: true, signingSecret: expect.stringMatching(/^whsec_/) });
      const plain = await app.request('POST', '/admin/v1/organizations', create('no-hooks', { quoteDefaults: { taxRate: 21 } }));
      expect(plain.body.settings).toEqual(expect.objectContaining({ signingSecretConfigured: false }));
      expect(plain.body.settings).not.toHaveProperty('signingSecret');
    });

    it('answers a PATCH that changes nothing (no body, an empty object) with 422 and the fields to send', async () => {
      for (const request of [{}, { body: {} }]) {
        const res = await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN, ...request });
        expect(res.status).toBe(422);
        expect(res.body.error.details.fields[0].message).toMatch(/^provide at least one of: name, /);
      }
    });

    it('rejects webhook URLs that are not http(s)', async () => {
      const res = await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN, body: { settings: { webhookUrl: 'ftp://example.com' } } });
      expect(res.status).toBe(422);
      expect(res.body.error.details.fields[0].path).toBe('settings.webhookUrl');
    });

    it('answers 404 for an unknown organization', async () => {
      const res = await app.request('GET', '/admin/v1/organizations/org_unknown', { token: ADMIN_TOKEN });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    });

    it.each([
      ['PATCH', '/admin/v1/organizations/org_unknown', { locale: 'fr' }],
      ['PATCH', '/admin/v1/organizations/org_unknown', {}],
      ['POST', '/admin/v1/organizations/org_unknown/api-keys', {}],
      ['POST', '/admin/v1/organizations/org_unknown/signing-secret', { unexpected: true }],
      ['GET', '/admin/v1/organizations/org_unknown/api-keys?limit=0', undefined],
    ] as const)('answers %s %s to an unknown organization 404 before looking at its body or query', async (method, path, body) => {
      const res = await app.request(method, path, { token: ADMIN_TOKEN, body });
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
      // and the admin token is still checked first
      expect((await app.request(method, path, { token: 'not-the-admin-token', body })).status).toBe(401);
    });

    it('lists keys without secrets and caps them at ten', async () => {
      const fresh = await app.createOrganization();
      const list = await app.request('GET', `/admin/v1/organizations/${fresh.organizationId}/api-keys`, { token: ADMIN_TOKEN });
      expect(list.status).toBe(200);
      expect(list.body.data).toHaveLength(2);
      expect(JSON.stringify(list.body)).not.toContain(fresh.apiKey);
      for (let i = 0; i < 8; i++) {
        expect((await app.request('POST', `/admin/v1/organizations/${fresh.organizationId}/api-keys`, { token: ADMIN_TOKEN, body: { name: `k${i}` } })).status).toBe(201);
      }
      const eleventh = await app.request('POST', `/admin/v1/organizations/${fresh.organizationId}/api-keys`, { token: ADMIN_TOKEN, body: { name: 'one too many' } });
      expect(eleventh.status).toBe(422);
    });

    it('pages the key list newest first like every list, and refuses a parameter it does not know', async () => {
      const fresh = await app.createOrganization();
      const base = `/admin/v1/organizations/${fresh.organizationId}/api-keys`;
      for (const name of ['third', 'fourth', 'fifth']) expect((await app.request('POST', base, { token: ADMIN_TOKEN, body: { name } })).status).toBe(201);
      const all = await app.request('GET', base, { token: ADMIN_TOKEN });
      expect(all.body.nextCursor).toBeNull();
      const keys = all.body.data as Array<{ id: string; name: string; createdAt: number }>;
      expect(keys.map((k) => k.name).slice(0, 3)).toEqual(['fifth', 'fourth', 'third']);
      expect(keys.every((k, i) => i === 0 || keys[i - 1].createdAt > k.createdAt || (keys[i - 1].createdAt === k.createdAt && keys[i - 1].id > k.id))).toBe(true);

      const pages: string[][] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: { data: Array<{ id: string }>; nextCursor: string | null } } = await app.request('GET', `${base}?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: ADMIN_TOKEN });
        expect(page.status).toBe(200);
        pages.push(page.body.data.map((k) => k.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      expect(pages.flat()).toEqual(keys.map((k) => k.id));

      const unknown = await app.request('GET', `${base}?limt=2`, { token: ADMIN_TOKEN });
      expect(unknown.status).toBe(422);
      expect(unknown.body.error.details.fields.map((f: { path: string }) => f.path)).toEqual(['limt']);
      const foreign = await app.request('GET', `${base}?cursor=${encodeURIComponent(Buffer.from(JSON.stringify({ l: 'templates', a: [1, 'x'] })).toString('base64url'))}`, { token: ADMIN_TOKEN });
      expect(foreign.status).toBe(422);
    });

    it('rotates the signing secret', async () => {
      const first = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
      const second = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
      expect(first.status).toBe(201);
      expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
      expect(second.body.secret).not.toBe(first.body.secret);
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the first response for the same key and body, and refuses another body', async () => {
      const body = { name: 'Idem', slug: 'idem-org' };
      const headers = { 'idempotency-key': 'create-idem-org' };
      const first = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body, headers });
      const again = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body, headers });
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      const other = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body: { ...body, name: 'Other' }, headers });
      expect(other.status).toBe(422);
      expect(other.body.error.details.fields[0].path).toBe('Idempotency-Key');
    });

    it('takes the same JSON in another member order and spacing as the same body', async () => {
      const headers = { 'idempotency-key': 'create-reordered', 'content-type': 'application/json' };
      const first = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, payload: '{"name":"Reordered","slug":"reordered-org","settings":{"quoteDefaults":{"taxRate":21,"validityDays":30}}}', headers });
      const again = await app.request('POST', '/admin/v1/organizations', {
        token: ADMIN_TOKEN,
        payload: '{ "settings": { "quoteDefaults": { "validityDays": 30, "taxRate": 21 } },\n  "slug": "reordered-org", "name": "Reordered" }',
        headers,
      });
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
    });

    it('answers a body JSON cannot represent canonically (1e400) in the envelope, not with a 500', async () => {
      const res = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, payload: '{"name":"Big","slug":"big-number","settings":{"pricingTimeoutMs":1e400}}', headers: { 'idempotency-key': 'big-number', 'content-type': 'application/json' } });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
    });

    it('replays the ETag of a quote write with its body', async () => {
      const f = new QuoteFixtures(app);
      const quoting = await f.organization();
      const quoteId = await f.createQuote(quoting, await f.submission(quoting));
      const send = () =>
        app.request('POST', `/api/v1/quotes/${quoteId}/send`, { token: quoting.apiKey, body: { recipients: ['ada@example.com'] }, headers: { 'idempotency-key': 'send-once' } });
      const first = await send();
      const again = await send();
      expect(first.status).toBe(200);
      expect(first.headers.etag).toMatch(/^"\d+-\d+"$/);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers.etag).toBe(first.headers.etag);
      expect(again.body).toEqual(first.body);
    });
  });
});

describe('platform: a request that reaches a closing server', () => {
  it('is answered 503 unavailable in the envelope, with Retry-After and Connection: close, not with the framework\'s own body', async () => {
    const app = await TestApp.start();
    const fastify = app.app.getHttpAdapter().getInstance();
    // Its preClose hooks run first: from then on a request that still comes (pipelined, or in a race with the close) is refused.
    const closing = app.close();
    const res = await fastify.inject({ method: 'GET', url: '/api/v1/quotes', headers: { 'x-request-id': 'late-1' } });
    await closing;
    expect([res.statusCode, res.json().error.code, res.headers['retry-after'], res.headers.connection, res.headers['x-request-id']]).toEqual([503, 'unavailable', '1', 'close', 'late-1']);
  });
});

describe('platform: rate limits', () => {
  let app: TestApp;
  /**
   * The limits count per one-minute window of the clock: a test whose requests straddle the turn
   * of a minute starts counting again half-way. Waits, when needed, until the window has 10 s left.
   */
  const inOneWindow = async (): Promise<void> => {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
  };

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_IP_PER_MIN: '5', RATE_LIMIT_KEY_PER_MIN: '8', RATE_LIMIT_CAPABILITY_PER_MIN: '0' });
  });
  afterAll(() => app.close());

  it('limits each API key and says when to retry', async () => {
    const org = await app.createOrganization();
    const statuses: number[] = [];
    let last;
    await inOneWindow();
    for (let i = 0; i < 9; i++) {
      last = await app.request('GET', '/api/v1/organization', { token: org.apiKey });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 8).every((s) => s === 200)).toBe(true);
    expect(last!.status).toBe(429);
    expect(last!.body.error.code).toBe('rate_limited');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    expect(last!.headers['ratelimit-limit']).toBe('8');
    expect(last!.headers['ratelimit-remaining']).toBe('0');
    // Another key of the same organization has its own budget.
    expect((await app.request('GET', '/api/v1/organization', { token: org.readOnlyKey })).status).toBe(200);
  });

  it('limits the admin token like an API key, in its own bucket, with the headers on every answer', async () => {
    const org = await app.createOrganization();
    await inOneWindow();
    const responses = [];
    for (let i = 0; i < 9; i++) responses.push(await app.request('GET', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN }));
    expect(responses.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429]);
    expect(responses.map((res) => res.headers['ratelimit-remaining'])).toEqual(['7', '6', '5', '4', '3', '2', '1', '0', '0']);
    for (const res of responses) expect(res.headers['ratelimit-limit']).toBe('8');
    expect(responses[8].body.error.code).toBe('rate_limited');
    expect(Number(responses[8].headers['retry-after'])).toBeGreaterThan(0);
    // An API key of the organization keeps its own budget.
    expect((await app.request('GET', '/api/v1/organization', { token: org.apiKey })).status).toBe(200);
  });

  it('puts the headers on a 415 as well', async () => {
    const org = await app.createOrganization();
    await inOneWindow();
    const res = await app.request('POST', '/api/v1/contacts', { token: org.apiKey, payload: 'email=a@example.com', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
    expect(res.headers['ratelimit-limit']).toBe('8');
    expect(res.headers['ratelimit-remaining']).toBe('7');
    expect(res.headers['ratelimit-reset']).toBeDefined();
  });

  it('limits unauthenticated requests per IP', async () => {
    const statuses: number[] = [];
    await inOneWindow();
    for (let i = 0; i < 6; i++) statuses.push((await app.request('GET', '/api/v1/organization')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('does not count the customer pages\' static files, only the pages and API calls', async () => {
    const pages = await TestApp.start({ RATE_LIMIT_IP_PER_MIN: '2' });
    try {
      const org = await pages.createOrganization();
      await inOneWindow();
      const assets = [];
      for (const file of ['styles.css', 'configurator.js', 'styles.css', 'configurator.js', 'quote.js']) assets.push(await pages.request('GET', `/assets/${file}`));
      expect(assets.map((res) => [res.status, res.headers['ratelimit-limit']])).toEqual(Array(5).fill([200, undefined]));
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await pages.request('GET', `/c/${org.slug}`)).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await pages.close();
    }
  });

  it('counts per client address behind a proxy with TRUST_PROXY (X-Forwarded-For), and ignores that header without it', async () => {
    // One trusted hop: the address the proxy in front appended, whatever a client put before it.
    const behindProxy = await TestApp.start({ RATE_LIMIT_IP_PER_MIN: '2', TRUST_PROXY: '1' });
    try {
      await inOneWindow();
      const from = async (target: TestApp, client: string) => (await target.request('GET', '/api/v1/organization', { headers: { 'x-forwarded-for': client } })).status;
      const spoofing = ['10.9.9.1, 203.0.113.1', '10.9.9.2, 203.0.113.1', '10.9.9.3, 203.0.113.1'];
      const statuses = [];
      for (const chain of spoofing) statuses.push(await from(behindProxy, chain));
      expect(statuses).toEqual([401, 401, 429]);
      expect(await from(behindProxy, '203.0.113.2')).toBe(401);
      // Without it the header is the client's word: every client behind it is one address.
      const direct = ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4', '198.51.100.5', '198.51.100.6'];
      const directStatuses = [];
      for (const client of direct) directStatuses.push(await from(app, client));
      expect(directStatuses.at(-1)).toBe(429);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('platform: the signing secret a settings change mints, in the logs', () => {
  it('is never logged, at any level, though the request is', async () => {
    const written: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        written.push(chunk.toString());
        done();
      },
    });
    const app = await TestApp.start({}, undefined, createLogger({ level: 'trace', name: 'test', destination }));
    try {
      const org = await app.createOrganization();
      const enabled = await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN, body: { settings: { externalPricingEnabled: true } } });
      const secret: string = enabled.body.settings.signingSecret;
      expect(secret).toMatch(/^whsec_/);
      flushRequestLines();
      const logs = written.join('');
      expect(logs).toContain(`/admin/v1/organizations/${org.organizationId}`);
      expect(logs).not.toContain(secret.slice('whsec_'.length));
    } finally {
      await app.close();
    }
  });
});
