import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReadYourWrites } from '@lib/event-sourcing';
import { IdempotencyStore } from '@lib/http';
import { WriteStoredNotYetVisible } from '@lib/shared';
import { waitFor } from '@lib/shared/testing/processes';
import { EventStore, WrongExpectedRevisionError } from '@lib/event-store';
import { OrganizationDirectory, slugStream } from '@lib/organizations';
import { QUOTE_NUMBER_STREAM } from '@lib/quotes';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import { DEMO_TEMPLATE } from '../apps/api-gateway/src/demo-template';
import { QuoteFixtures, type Org } from './quotes-fixtures';
import { ADMIN_TOKEN, TestApp, type TestResponse } from './support/test-app';

/**
 * Idempotency-Key next to authorization and retryable failures (decisions §2, §3): a key that may
 * not make a request gets its own refusal, never an answer stored for another key, and an answer
 * that says "try again" is not kept for the retry.
 */
/** Whether the gateway takes writes (its read side is not known to be behind). */
function keepingUp(readYourWrites: ReadYourWrites): boolean {
  try {
    readYourWrites.assertKeepingUp();
    return true;
  } catch {
    return false;
  }
}

/** The quote number after `number` (Q-2026-000041 → Q-2026-000042). */
const nextNumber = (number: string) => number.replace(/\d+$/, (digits) => String(Number(digits) + 1).padStart(digits.length, '0'));

describe('Idempotency-Key: authorization and retries', () => {
  let app: TestApp;
  let f: QuoteFixtures;
  let org: Org;

  beforeAll(async () => {
    app = await TestApp.start();
    f = new QuoteFixtures(app);
    org = await f.organization();
  });
  afterAll(() => app.close());

  const createQuote = (token: string, submissionId: string, key: string) =>
    app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token, body: { reference: 'PO-1' }, headers: { 'idempotency-key': key } });

  it("does not keep a read-only key's refusal: the full key then runs the request with the same key and body", async () => {
    const submissionId = await f.submission(org);
    const refused = await createQuote(org.readOnlyKey, submissionId, 'abc1');
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('read_only_key');

    const created = await createQuote(org.apiKey, submissionId, 'abc1');
    expect(created.status).toBe(201);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
    expect((await f.quote(org, created.body.quoteId)).reference).toBe('PO-1');
  });

  it("refuses a read-only key its own 403, not the full key's stored 201, while the full key still gets the replay", async () => {
    const submissionId = await f.submission(org);
    const created = await createQuote(org.apiKey, submissionId, 'abc2');
    expect(created.status).toBe(201);

    const refused = await createQuote(org.readOnlyKey, submissionId, 'abc2');
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('read_only_key');
    expect(refused.headers['idempotent-replayed']).toBeUndefined();

    const replayed = await createQuote(org.apiKey, submissionId, 'abc2');
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(created.body);
  });

  it("refuses a storefront submit without the session's customer token its own 401, not the customer's stored 201", async () => {
    const started = await app.request('POST', `/storefront/v1/${org.slug}/sessions`, { body: { templateId: org.templateId } });
    const { sessionId, customerToken } = started.body;
    expect((await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() })).status).toBe(200);
    const submit = (token?: string) =>
      app.request('POST', `/storefront/v1/sessions/${sessionId}/submit`, { token, body: { customer: { name: 'Ada Lovelace', email: 'ada@example.com' } }, headers: { 'idempotency-key': 'submit-once' } });

    const submitted = await submit(customerToken);
    expect(submitted.status).toBe(201);
    // Anonymous callers share their IP's scope: this one sends the same key and body from the same address.
    const stranger = await submit();
    expect(stranger.status).toBe(401);
    expect(stranger.headers['idempotent-replayed']).toBeUndefined();
    expect(stranger.body).not.toEqual(submitted.body);

    const retried = await submit(customerToken);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.body).toEqual(submitted.body);
  });

  it('replays a retry sent with a query string or an escaped id: one quote, one number', async () => {
    const submissionId = await f.submission(org);
    const created = await createQuote(org.apiKey, submissionId, 'abc-url');
    expect(created.status).toBe(201);
    const escaped = submissionId.replace('_', '%5F');
    for (const url of [`/api/v1/submissions/${submissionId}/quotes?`, `/api/v1/submissions/${submissionId}/quotes?retry=1`, `/api/v1/submissions/${escaped}/quotes`]) {
      const retried = await app.request('POST', url, { token: org.apiKey, body: { reference: 'PO-1' }, headers: { 'idempotency-key': 'abc-url' } });
      expect([url, retried.status, retried.headers['idempotent-replayed'], retried.body]).toEqual([url, 201, 'true', created.body]);
    }
    const quotes = await app.request('GET', `/api/v1/quotes?submissionId=${submissionId}`, { token: org.apiKey });
    expect(quotes.body.data.map((quote: { id: string }) => quote.id)).toEqual([created.body.quoteId]);
  });

  it('a retry whose first answer was lost (a crash before it was stored) finds the quote, the lead, the template, the send and the acceptance the first attempt made: no second quote, number, lead, template or e-mail, and no 409', async () => {
    const submissionId = await f.submission(org);
    const store = app.get(IdempotencyStore);
    /**
     * Sends the request twice: the first time the write is made and its answer never stored under
     * the key (what a crash in between leaves), the second as the client's retry. The retry
     * answers as the first attempt did; returns that answer.
     */
    const lostThenRetried = async (send: () => Promise<TestResponse>, status: number) => {
      jest.spyOn(store, 'put').mockRejectedValueOnce(new Error('the process died'));
      const first = await send();
      expect(first.status).toBe(status);
      const retried = await send();
      expect([retried.status, retried.body]).toEqual([status, first.body]);
      return first;
    };

    const first = await lostThenRetried(() => createQuote(org.apiKey, submissionId, 'lost-answer'), 201);
    const quotes = await app.request('GET', `/api/v1/quotes?submissionId=${submissionId}`, { token: org.apiKey });
    expect(quotes.body.data.map((quote: { id: string }) => quote.id)).toEqual([first.body.quoteId]);
    const next = await createQuote(org.apiKey, submissionId, 'another-key');
    expect((await f.quote(org, next.body.quoteId)).quoteNumber).toBe(nextNumber((await f.quote(org, first.body.quoteId)).quoteNumber));

    await lostThenRetried(() => app.request('POST', `/storefront/v1/${org.slug}/leads`, { body: { name: 'Ada', email: 'ada@example.com', message: 'A quote for 3 windows?' }, headers: { 'idempotency-key': 'lost-lead' } }), 201);
    const leads = await app.request('GET', '/api/v1/leads', { token: org.apiKey });
    expect(leads.body.data.filter((each: { message: string }) => each.message === 'A quote for 3 windows?')).toHaveLength(1);

    const template = { ...exampleTemplateBody(), name: 'Lost answer window' };
    await lostThenRetried(() => app.request('POST', `/admin/v1/organizations/${org.organizationId}/templates`, { token: ADMIN_TOKEN, body: template, headers: { 'idempotency-key': 'lost-template' } }), 201);
    const templates = await app.request('GET', '/api/v1/templates?limit=100', { token: org.apiKey });
    expect(templates.body.data.filter((each: { name: string }) => each.name === 'Lost answer window')).toHaveLength(1);

    await lostThenRetried(() => app.request('POST', `/api/v1/quotes/${first.body.quoteId}/send`, { token: org.apiKey, body: { recipients: ['ada@example.com'] }, headers: { 'idempotency-key': 'lost-send' } }), 200);
    // One send: one e-mail, and the quote's history has one sent version.
    expect(await f.awaitMails(first.body.quoteId)).toHaveLength(1);
    const history = await app.request('GET', `/api/v1/quotes/${first.body.quoteId}/versions`, { token: org.apiKey });
    expect(history.body.data.filter((entry: { snapshot: { status: string } }) => entry.snapshot.status === 'sent')).toHaveLength(1);

    // The customer's acceptance: the retry is answered as the first attempt was, not 409 quote_not_actionable.
    const token = await f.customerToken(first.body.quoteId);
    const accepted = await lostThenRetried(() => app.request('POST', `/storefront/v1/quotes/${token}/accept`, { body: { name: 'Ada', version: 1 }, headers: { 'idempotency-key': 'lost-accept' } }), 200);
    expect(accepted.body).toMatchObject({ status: 'accepted', version: 1 });
    const answered = await app.request('GET', `/api/v1/quotes/${first.body.quoteId}/versions`, { token: org.apiKey });
    expect(answered.body.data.filter((entry: { snapshot: { status: string } }) => entry.snapshot.status === 'accepted')).toHaveLength(1);
    // Another answer, with another key, is refused as before.
    const other = await app.request('POST', `/storefront/v1/quotes/${token}/accept`, { body: { name: 'Ada', version: 1 }, headers: { 'idempotency-key': 'another-accept' } });
    expect([other.status, other.body.error.code]).toEqual([409, 'quote_not_actionable']);
  });

  it('does not keep a 409 conflict ("retry the request"): the retry with the same key runs again and succeeds', async () => {
    const submissionId = await f.submission(org);
    // The organization's quote-number counter stays contended past the allocator's retries.
    const events = app.get(EventStore);
    const append = events.appendToStream.bind(events);
    const contended = jest.spyOn(events, 'appendToStream').mockImplementation((streamId, ...rest) =>
      streamId.startsWith(`${QUOTE_NUMBER_STREAM}${org.organizationId}`) ? Promise.reject(new WrongExpectedRevisionError(streamId, 0, 1)) : append(streamId, ...rest),
    );
    let conflict;
    try {
      conflict = await createQuote(org.apiKey, submissionId, 'abc3');
    } finally {
      contended.mockRestore();
    }
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('conflict');

    const retried = await createQuote(org.apiKey, submissionId, 'abc3');
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect((await f.quote(org, retried.body.quoteId)).reference).toBe('PO-1');
  });

  it('keeps the 503 of a quote that is stored while the read side lags: the retry with the same key is told so and makes no second quote nor takes another number', async () => {
    const submissionId = await f.submission(org);
    const readYourWrites = app.get(ReadYourWrites);
    const { timeoutMs } = readYourWrites;
    // A projection that never reports: the read side is behind for every write from here on.
    readYourWrites.track(['stalled-in-test']);
    readYourWrites.timeoutMs = 50;
    let stored;
    let retried;
    let refused;
    let refusingMetric;
    const refusingWrites = async () => /^gateway_refusing_writes (\d)$/m.exec((await app.request('GET', '/metrics')).body as string)?.[1];
    expect(await refusingWrites()).toBe('0');
    try {
      stored = await createQuote(org.apiKey, submissionId, 'lagging-1');
      retried = await createQuote(org.apiKey, submissionId, 'lagging-1');
      refused = await createQuote(org.apiKey, submissionId, 'lagging-2');
      refusingMetric = await refusingWrites();
    } finally {
      readYourWrites.report('stalled-in-test', Number.MAX_SAFE_INTEGER);
      readYourWrites.timeoutMs = timeoutMs;
    }
    expect([stored.status, stored.body.error.code, stored.body.error.details]).toEqual([503, 'unavailable', { writeStored: true, quoteId: expect.any(String), quoteNumber: expect.any(String) }]);
    expect([retried.status, retried.headers['idempotent-replayed'], retried.headers['retry-after'], retried.body]).toEqual([503, 'true', '1', stored.body]);
    // Another write, while the read side is known to be behind, is refused before anything is written.
    expect([refused.status, refused.body.error.details, refused.headers['retry-after']]).toEqual([503, undefined, '1']);
    expect(refused.body.error.message).toContain('nothing was written');
    // /metrics says so (its /readyz stays 200: reads are served, and every gateway shares the read side).
    expect(refusingMetric).toBe('1');

    // The product's own writes made meanwhile (the outbox's reactors) waited with the short timeout
    // too, and may still time out: a later timer fires after all of theirs.
    await new Promise((resolve) => setTimeout(resolve, 2 * 50));
    // Writes are taken again once every projection has reached the writes it was too slow for (on
    // the real engines that can take a moment after the stalled one is released).
    await waitFor(() => keepingUp(readYourWrites), 10_000);
    expect(await refusingWrites()).toBe('0');
    const quotes = await app.request('GET', `/api/v1/quotes?submissionId=${submissionId}`, { token: org.apiKey });
    expect(quotes.body.data.map((quote: { id: string; quoteNumber: string }) => [quote.id, quote.quoteNumber])).toEqual([[stored.body.error.details.quoteId, stored.body.error.details.quoteNumber]]);
    const made = await app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: org.apiKey, body: {} });
    expect([made.status, made.body]).toEqual([201, { quoteId: expect.any(String) }]);
    const next = await f.quote(org, made.body.quoteId);
    expect(Number(next.quoteNumber.slice(-6))).toBe(Number(quotes.body.data[0].quoteNumber.slice(-6)) + 1);
  });

  it.each([
    ['a template', () => ({ path: `/admin/v1/organizations/${org.organizationId}/templates`, token: ADMIN_TOKEN, body: DEMO_TEMPLATE }), 'templateId', (id: string) => `/api/v1/templates/${id}`],
    ['a lead', () => ({ path: `/storefront/v1/${org.slug}/leads`, token: undefined, body: { name: 'Ada', email: 'ada@example.com', message: 'Six windows.' } }), 'leadId', (id: string) => `/api/v1/leads/${id}`],
    ['an organization', () => ({ path: '/admin/v1/organizations', token: ADMIN_TOKEN, body: { name: 'Lagging BV', slug: 'lagging-bv' } }), 'organizationId', (id: string) => `/admin/v1/organizations/${id}`],
    ['a contact', () => ({ path: '/api/v1/contacts', token: org.apiKey, body: { email: 'lagging@example.com', name: 'Lagging' } }), 'contactId', (id: string) => `/api/v1/contacts/${id}`],
  ])('names %s stored while the read side lags in its 503, and that one is there once it caught up', async (_, made, field, readPath) => {
    const lagging = lagOnceAfterWriteTo({ templateId: 'template-', leadId: 'lead-', organizationId: 'organization-', contactId: 'contact-' }[field as string]!);
    const { path, token, body } = made();
    let stored;
    try {
      stored = await app.request('POST', path, { token, body, headers: { 'idempotency-key': `lagging-${field}` } });
    } finally {
      lagging.mockRestore();
    }
    expect([stored.status, stored.body.error?.details]).toEqual([503, { writeStored: true, [field]: expect.any(String) }]);
    const replayed = await app.request('POST', path, { token, body, headers: { 'idempotency-key': `lagging-${field}` } });
    expect([replayed.status, replayed.headers['idempotent-replayed'], replayed.body]).toEqual([503, 'true', stored.body]);
    const id = stored.body.error.details[field];
    const url = readPath(id);
    const as = { token: field === 'organizationId' ? ADMIN_TOKEN : org.apiKey };
    let read = await app.request('GET', url, as);
    for (const deadline = Date.now() + 10_000; read.status === 404 && Date.now() < deadline; read = await app.request('GET', url, as)) await new Promise((resolve) => setTimeout(resolve, 20));
    expect([read.status, read.body.id]).toEqual([200, id]);
  });

  it.each([
    ['a rotated signing secret', 'signing-secret', undefined, 'secret'],
    ['a new API key', 'api-keys', { name: 'ERP' }, 'key'],
  ])('shows %s even when the read side lags: it exists only in that answer', async (_, path, body, field) => {
    const { organizationId } = await app.createOrganization();
    const lagging = lagOnceAfterWriteTo('organization-');
    let shown;
    try {
      shown = await app.request('POST', `/admin/v1/organizations/${organizationId}/${path}`, { token: ADMIN_TOKEN, body });
    } finally {
      lagging.mockRestore();
    }
    // The wait after this very write ran out, not some other writer's.
    expect(lagging.lagged()).toBe(true);
    expect(shown.status).toBe(201);
    expect(typeof shown.body[field]).toBe('string');
  });

  /**
   * The wait for the read side after the next write to a stream with this prefix runs out, as
   * when the projector lags; the product's own writes meanwhile (its reactors) wait as usual.
   */
  function lagOnceAfterWriteTo(streamPrefix: string) {
    const readYourWrites = app.get(ReadYourWrites);
    const waitFor = readYourWrites.waitFor.bind(readYourWrites);
    const events = app.get(EventStore);
    let lagged = false;
    // As the real one does when the read side is late: the 503 names what the write made.
    const spy = jest.spyOn(readYourWrites, 'waitFor').mockImplementation(async (position: number, made?: Record<string, string>) => {
      const [event] = await events.readAll({ after: position - 1, maxCount: 1 });
      if (!lagged && event?.position === position && event.streamId.startsWith(streamPrefix)) {
        lagged = true;
        throw new WriteStoredNotYetVisible(made);
      }
      return waitFor(position, made);
    });
    return { lagged: () => lagged, mockRestore: () => spy.mockRestore() };
  }

  it('shows the signing secret an organization\'s creation minted even when the read side has not applied the creation yet, as the read side then shows it', async () => {
    const lagging = lagOnceAfterWriteTo('organization-');
    // The new organization is not found by the read side the first time it is looked up. Other
    // work of the process (the outbox's mails of earlier tests) looks organizations up meanwhile:
    // only the new one is hidden.
    const directory = app.get(OrganizationDirectory);
    const find = directory.find.bind(directory);
    let hidden: string | null = null;
    const unseen = jest.spyOn(directory, 'find').mockImplementation(async (id: string) => {
      const found = await find(id);
      if (hidden === null && (found === null || found.slug === 'live-while-lagging')) {
        hidden = id;
        return null;
      }
      return found;
    });
    let created;
    try {
      created = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body: { name: 'Live BV', slug: 'live-while-lagging', locale: 'nl', settings: { externalPricingEnabled: true } } });
      expect([lagging.lagged(), hidden]).toEqual([true, created.body.id]);
    } finally {
      lagging.mockRestore();
      unseen.mockRestore();
    }
    expect(created.status).toBe(201);
    const { signingSecret, ...settings } = created.body.settings;
    expect(signingSecret).toMatch(/^whsec_/);
    // On the real engines the read side may really be behind: the organization is read once it is there.
    let read = await app.request('GET', `/admin/v1/organizations/${created.body.id}`, { token: ADMIN_TOKEN });
    for (const deadline = Date.now() + 10_000; read.status === 404 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      read = await app.request('GET', `/admin/v1/organizations/${created.body.id}`, { token: ADMIN_TOKEN });
    }
    expect(read.body).toEqual({ ...created.body, settings });
  });

  it.each([
    ['an API key', 'api-keys', { name: 'ERP' }, 'key'],
    ['a signing secret', 'signing-secret', undefined, 'secret'],
  ])('never shows %s twice: the same Idempotency-Key replays the first answer without it and makes no second one', async (_, path, body, field) => {
    const { organizationId } = await app.createOrganization();
    const post = () => app.request('POST', `/admin/v1/organizations/${organizationId}/${path}`, { token: ADMIN_TOKEN, body, headers: { 'idempotency-key': `once-${path}` } });
    const first = await post();
    const second = await post();
    expect([first.status, second.status, second.headers['idempotent-replayed']]).toEqual([201, 201, 'true']);
    expect(typeof first.body[field]).toBe('string');
    const { [field]: _shown, ...rest } = first.body;
    expect(second.body).toEqual(rest);
    const organization = (await app.request('GET', `/admin/v1/organizations/${organizationId}`, { token: ADMIN_TOKEN })).body;
    if (path === 'api-keys') {
      const keys = (await app.request('GET', `/admin/v1/organizations/${organizationId}/api-keys`, { token: ADMIN_TOKEN })).body.data;
      expect(keys.filter((key: { name: string }) => key.name === 'ERP').map((key: { id: string }) => key.id)).toEqual([first.body.id]);
    } else {
      expect(organization.settings.signingSecretConfigured).toBe(true);
      const rotations = (await app.get(EventStore).readStream(`organization-${organizationId}`)).filter((event) => event.type === 'organization.v2.signingSecretRotated');
      expect(rotations).toHaveLength(1);
    }
    const kept = await app.get(IdempotencyStore).get(`admin POST /admin/v1/organizations/${organizationId}/${path}`, `once-${path}`, Date.now());
    expect(kept?.status).toBe(201);
    expect(kept!.body).not.toContain(first.body[field]);
    // The header is still checked as on every POST.
    const tooLong = await app.request('POST', `/admin/v1/organizations/${organizationId}/${path}`, { token: ADMIN_TOKEN, body, headers: { 'idempotency-key': 'k'.repeat(256) } });
    expect([tooLong.status, tooLong.body.error?.details.fields]).toEqual([422, [{ path: 'Idempotency-Key', message: 'must be 1 to 255 characters' }]]);
  });
});

describe('Idempotency-Key: a secret-showing POST whose answer was lost', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
  });
  afterAll(() => app.close());

  /** The first attempt's write is made and its answer never stored under the key (a crash in between); the retry follows. */
  const lostThenRetried = async (send: () => Promise<TestResponse>) => {
    jest.spyOn(app.get(IdempotencyStore), 'put').mockRejectedValueOnce(new Error('the process died'));
    return [await send(), await send()];
  };

  it.each([
    ['an API key', 'api-keys', { name: 'ERP' }, 'key'],
    ['a signing secret', 'signing-secret', undefined, 'secret'],
  ])('makes no second one of %s: the retry gets the first answer without its secret, as a replay would', async (_, path, body, field) => {
    const { organizationId } = await app.createOrganization();
    const [first, retried] = await lostThenRetried(() =>
      app.request('POST', `/admin/v1/organizations/${organizationId}/${path}`, { token: ADMIN_TOKEN, body, headers: { 'idempotency-key': `lost-${path}` } }),
    );
    expect([first.status, retried.status, retried.headers['idempotent-replayed']]).toEqual([201, 201, undefined]);
    expect(typeof first.body[field]).toBe('string');
    const { [field]: _shown, ...rest } = first.body;
    expect(retried.body).toEqual(rest);
    const stream = await app.get(EventStore).readStream(`organization-${organizationId}`);
    const made = stream.filter((event) => event.type === (path === 'api-keys' ? 'organization.v1.apiKeyCreated' : 'organization.v2.signingSecretRotated'));
    expect(made).toHaveLength(path === 'api-keys' ? 3 : 1); // test-app makes two keys of its own
    // Another key makes another.
    const next = await app.request('POST', `/admin/v1/organizations/${organizationId}/${path}`, { token: ADMIN_TOKEN, body, headers: { 'idempotency-key': `next-${path}` } });
    expect([next.status, typeof next.body[field]]).toEqual([201, 'string']);
    expect(next.body[field]).not.toBe(first.body[field]);
  });

  it('creates no second organization: the retry gets the organization without the secret its creation minted, not a taken slug', async () => {
    const body = { name: 'Lost BV', slug: 'lost-answer-bv', settings: { externalPricingEnabled: true } };
    const [first, retried] = await lostThenRetried(() => app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body, headers: { 'idempotency-key': 'lost-org' } }));
    expect([first.status, retried.status]).toEqual([201, 201]);
    expect(first.body.settings.signingSecret).toMatch(/^whsec_/);
    const { signingSecret: _shown, ...settings } = first.body.settings;
    expect(retried.body).toEqual({ ...first.body, settings });
    // Another key with the same slug is told it is taken.
    const other = await app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body, headers: { 'idempotency-key': 'other-org' } });
    expect([other.status, other.body.error.details.fields]).toEqual([422, [{ path: 'slug', message: 'slug "lost-answer-bv" is already in use' }]]);
  });

  it('does not answer a retry with an organization another request created on the claim its first attempt left', async () => {
    const body = { name: 'First BV', slug: 'orphaned-claim-bv' };
    const create = (headers: Record<string, string>, sent: object = body) => app.request('POST', '/admin/v1/organizations', { token: ADMIN_TOKEN, body: sent, headers });
    // The first attempt claims the slug and fails before its organization is written.
    const events = app.get(EventStore);
    const append = events.appendToStream.bind(events);
    let claimed = false;
    const failing = jest.spyOn(events, 'appendToStream').mockImplementation((streamId, ...rest) => {
      if (claimed && streamId.startsWith('organization-')) return Promise.reject(new Error('the process died'));
      claimed ||= streamId === slugStream('orphaned-claim-bv');
      return append(streamId, ...rest);
    });
    let first;
    try {
      first = await create({ 'idempotency-key': 'orphaning-org' });
    } finally {
      failing.mockRestore();
    }
    expect(first.status).toBe(500);
    // Another creation takes the claim over, under its id.
    const taken = await create({}, { name: 'Second BV', slug: 'orphaned-claim-bv' });
    expect(taken.status).toBe(201);
    const retried = await create({ 'idempotency-key': 'orphaning-org' });
    expect([retried.status, retried.body.error?.details.fields]).toEqual([422, [{ path: 'slug', message: 'slug "orphaned-claim-bv" is already in use' }]]);
  });
});

/**
 * The stored answers outlive the gateway (decisions §3: 24 h): a client that retries after a
 * restart, with the same key and body, gets the first answer, not a second quote that would also
 * take the next number of the gap-free sequence. Embedded, they are in DATA_DIR; with MONGODB_URL,
 * in its database.
 */
describe('Idempotency-Key across a restart (same DATA_DIR)', () => {
  let dataDir: string;
  let app: TestApp | null = null;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'idempotency-restart-'));
  });
  afterEach(async () => {
    await app?.close();
    app = null;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('replays the answer stored before the restart, and creates no second quote nor spends another number', async () => {
    app = await TestApp.start({}, dataDir);
    let f = new QuoteFixtures(app);
    const org = await f.organization();
    const submissionId = await f.submission(org);
    const createQuote = () =>
      app!.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: org.apiKey, body: { reference: 'PO-7' }, headers: { 'idempotency-key': 'restart-1' } });
    const created = await createQuote();
    expect(created.status).toBe(201);
    const { quoteNumber } = await f.quote(org, created.body.quoteId);
    await app.close();

    app = await TestApp.start({}, dataDir);
    f = new QuoteFixtures(app);
    const retried = await createQuote();
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.body).toEqual(created.body);
    const quotes = await app.request('GET', `/api/v1/quotes?submissionId=${submissionId}`, { token: org.apiKey });
    expect(quotes.body.data.map((quote: { id: string }) => quote.id)).toEqual([created.body.quoteId]);
    const made = await app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: org.apiKey, body: {} });
    expect([made.status, made.body]).toEqual([201, { quoteId: expect.any(String) }]);
    const next = await f.quote(org, made.body.quoteId);
    expect(Number(next.quoteNumber.slice(-6))).toBe(Number(quoteNumber.slice(-6)) + 1);
  });
});
