import { EventStore } from '@lib/event-store';
import { quoteStream } from '@lib/quotes';
import { Clock } from '@lib/shared';
import { fieldPaths, pause, QuoteFixtures, type Org } from './quotes-fixtures';
import { TestApp } from './support/test-app';

const DAY = 24 * 60 * 60 * 1000;
const CUSTOMER_FIELDS = [
  'organization', 'quoteNumber', 'version', 'status', 'reference', 'notes', 'currency', 'taxRate', 'lineItems', 'subtotal', 'taxAmount', 'total',
  'validityDays', 'validUntil', 'sentAt', 'viewedAt', 'respondedAt',
].sort();
const UNKNOWN_TOKEN = 'A'.repeat(43);

describe('quotes on the storefront (the customer link)', () => {
  let app: TestApp;
  let f: QuoteFixtures;
  let org: Org;

  const view = (token: string) => app.request('GET', `/storefront/v1/quotes/${token}`);
  const accept = (token: string, body: unknown = {}) => app.request('POST', `/storefront/v1/quotes/${token}/accept`, { body });
  const reject = (token: string, body: unknown = {}) => app.request('POST', `/storefront/v1/quotes/${token}/reject`, { body });
  const apiQuote = (quoteId: string) => f.quote(org, quoteId);

  /** A sent quote of a fresh submission, with the customer's token from the e-mail. */
  async function sentQuote(body: Record<string, unknown> = {}) {
    const submissionId = await f.submission(org);
    const quoteId = await f.createQuote(org, submissionId, { reference: 'PO-1', notes: 'Fitting included', ...body });
    await f.send(org, quoteId);
    return { quoteId, submissionId, token: await f.customerToken(quoteId) };
  }

  beforeAll(async () => {
    app = await TestApp.start();
    f = new QuoteFixtures(app);
    org = await f.organization();
  });
  afterAll(() => app.close());

  it('a HEAD of the quote link (a link checker, a mail scanner) answers and leaves the quote sent', async () => {
    const { quoteId, token } = await sentQuote();
    const head = await app.request('HEAD', `/storefront/v1/quotes/${token}`);
    expect(head.status).toBe(200);
    expect(await apiQuote(quoteId)).toMatchObject({ status: 'sent', viewedAt: null });
    expect((await view(token)).body.status).toBe('viewed');
  });

  it('shows the customer the quote without any credentials; the first view moves sent to viewed', async () => {
    const { quoteId, token } = await sentQuote();
    const sent = await apiQuote(quoteId);
    const res = await view(token);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(CUSTOMER_FIELDS);
    expect(res.body).toMatchObject({
      organization: { name: `Org ${org.slug}` },
      quoteNumber: sent.quoteNumber,
      version: 1,
      status: 'viewed',
      reference: 'PO-1',
      notes: 'Fitting included',
      currency: 'EUR',
      taxRate: 21,
      subtotal: sent.subtotal,
      taxAmount: sent.taxAmount,
      total: sent.total,
      validityDays: 30,
      validUntil: sent.validUntil,
      sentAt: sent.sentAt,
      respondedAt: null,
    });
    expect(res.body.lineItems).toEqual(sent.lineItems.map(({ description, quantity, unitPrice, total, itemType, order }: any) => ({ description, quantity, unitPrice, total, itemType, order })));
    const viewed = await apiQuote(quoteId);
    expect(viewed).toMatchObject({ status: 'viewed', viewedAt: res.body.viewedAt, version: 1 });
    await pause(2);
    const again = await view(token);
    expect(again.body).toMatchObject({ status: 'viewed', viewedAt: res.body.viewedAt });
    expect((await apiQuote(quoteId)).updatedAt).toBe(viewed.updatedAt);
  });

  it('answers 404 not_found for an unknown or malformed token', async () => {
    for (const token of [UNKNOWN_TOKEN, 'short', `${UNKNOWN_TOKEN}!`]) {
      for (const res of [await view(token), await accept(token), await reject(token), await app.request('GET', `/storefront/v1/quotes/${token}/pdf`)]) {
        expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
      }
    }
  });

  it('lets the customer accept: the quote is accepted, the submission closed, and nothing can change it any more but externalRef', async () => {
    const { quoteId, submissionId, token } = await sentQuote();
    const res = await accept(token, { name: '<b>Ada</b> Lovelace' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'accepted', respondedAt: expect.any(Number) });
    expect((await apiQuote(quoteId)).status).toBe('accepted');
    expect((await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: org.apiKey })).body.status).toBe('closed');

    for (const again of [await accept(token), await reject(token)]) expect([again.status, again.body.error.code]).toEqual([409, 'quote_not_actionable']);
    const patch = await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { notes: 'x', revise: true } });
    expect([patch.status, patch.body.error.code]).toEqual([409, 'quote_not_editable']);
    const put = await app.request('PUT', `/api/v1/quotes/${quoteId}/line-items`, { token: org.apiKey, body: { lineItems: [{ description: 'x', quantity: 1, unitPrice: 1 }], revise: true } });
    expect([put.status, put.body.error.code]).toEqual([409, 'quote_not_editable']);
    const send = await app.request('POST', `/api/v1/quotes/${quoteId}/send`, { token: org.apiKey, body: { recipients: ['ada@example.com'] } });
    expect([send.status, send.body.error.code]).toEqual([409, 'quote_not_sendable']);
    expect((await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { externalRef: 'erp:order:9' } })).status).toBe(200);
    expect(await apiQuote(quoteId)).toMatchObject({ status: 'accepted', externalRef: 'erp:order:9', version: 1 });
  });

  it('lets the customer reject with a reason, straight from the e-mail (without viewing first)', async () => {
    const { quoteId, submissionId, token } = await sentQuote();
    const res = await reject(token, { reason: 'Too expensive' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'rejected', viewedAt: null, respondedAt: expect.any(Number) });
    expect((await apiQuote(quoteId)).status).toBe('rejected');
    expect((await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: org.apiKey })).body.status).toBe('quoted');
    expect((await accept(token)).status).toBe(409);
  });

  it('while a new version is being prepared, shows the version last sent and refuses to accept it; the next send shows the new one under the same link', async () => {
    const { quoteId, token } = await sentQuote();
    const revised = await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { taxRate: 0, revise: true } });
    expect(revised.body.version).toBe(2);
    const during = await view(token);
    expect(during.body).toMatchObject({ version: 1, status: 'draft', taxRate: 21 });
    const refused = await accept(token);
    expect([refused.status, refused.body.error.code]).toEqual([409, 'quote_not_actionable']);
    expect((await apiQuote(quoteId)).status).toBe('draft');

    await f.send(org, quoteId);
    const mails = await f.awaitMails(quoteId, 2);
    expect(new Set(mails.map((m) => m.quoteUrl)).size).toBe(1);
    expect((await view(token)).body).toMatchObject({ version: 2, status: 'viewed', taxRate: 0 });
    expect((await accept(token)).body).toMatchObject({ version: 2, status: 'accepted' });
  });

  it('refuses an answer for a version the page no longer shows: version 2 sent while the customer sees version 1 is 409 and changes nothing', async () => {
    const { quoteId, submissionId, token } = await sentQuote({ lineItems: [{ description: 'Tilt-turn window', quantity: 1, unitPrice: 551.88 }] });
    const shown = (await view(token)).body;
    expect(shown).toMatchObject({ version: 1, total: 667.77 });
    // The organization replaces the breakdown and sends version 2; the customer's page still shows version 1.
    const replaced = await app.request('PUT', `/api/v1/quotes/${quoteId}/line-items`, {
      token: org.apiKey,
      body: { lineItems: [{ description: 'Lift-and-slide door', quantity: 1, unitPrice: 9999 }], revise: true },
    });
    expect(replaced.body).toMatchObject({ version: 2, total: 12098.79 });
    await f.send(org, quoteId);

    for (const res of [await accept(token, { name: 'Ada', version: shown.version }), await reject(token, { reason: 'Too expensive', version: shown.version })]) {
      expect([res.status, res.body.error.code]).toEqual([409, 'quote_not_actionable']);
      expect(res.body.error.details).toMatchObject({ status: 'sent', version: 2 });
    }
    expect(await apiQuote(quoteId)).toMatchObject({ status: 'sent', version: 2, total: 12098.79 });
    expect((await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: org.apiKey })).body.status).toBe('quoted');

    // Reloaded, the page shows version 2, and the customer answers what they now see.
    expect((await view(token)).body).toMatchObject({ version: 2, status: 'viewed', total: 12098.79 });
    expect((await accept(token, { version: 2 })).body).toMatchObject({ version: 2, status: 'accepted', total: 12098.79 });
  });

  it('refuses invalid accept and reject bodies with 422', async () => {
    const { quoteId, token } = await sentQuote();
    const long = await accept(token, { name: 'x'.repeat(201) });
    expect([long.status, fieldPaths(long)]).toEqual([422, ['name']]);
    const unknown = await reject(token, { reason: 'x', rating: 1 });
    expect([unknown.status, fieldPaths(unknown)]).toEqual([422, ['rating']]);
    for (const version of [0, 1.5, '1', null]) {
      const res = await accept(token, { version });
      expect([res.status, [...new Set(fieldPaths(res))]]).toEqual([422, ['version']]);
    }
    expect((await apiQuote(quoteId)).status).toBe('sent');
  });

  it('serves the page behind the e-mail link; fetching it alone (as a mail scanner does) does not count as a view', async () => {
    const { quoteId, token } = await sentQuote();
    const [mail] = await f.awaitMails(quoteId);
    const res = await app.request('GET', new URL(mail.quoteUrl).pathname);
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toContain('text/html');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(String(res.headers['content-security-policy'])).toContain("default-src 'none'");
    expect(res.body).toContain('<script src="../assets/quote.js" defer></script>');
    expect(res.body).not.toContain(token);
    expect((await apiQuote(quoteId)).status).toBe('sent');
  });

});

describe('quote expiry (the check the outbox runs every QUOTE_EXPIRY_CHECK_MS)', () => {
  let app: TestApp;
  let f: QuoteFixtures;
  let org: Org;
  let offset = 0;

  const eventTypes = async (quoteId: string) => (await app.get(EventStore).readStream(quoteStream(quoteId))).map((e) => e.type);
  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    for (let waited = 0; waited < 5_000; waited += 20) {
      const value = await read();
      if (done(value)) return value;
      await pause(20);
    }
    return read();
  }

  beforeAll(async () => {
    app = await TestApp.start({ QUOTE_EXPIRY_CHECK_MS: '25' });
    f = new QuoteFixtures(app);
    org = await f.organization();
    // The service's clock, moved forward by `offset` (days pass without waiting for them).
    const clock = app.get(Clock);
    const now = clock.now.bind(clock);
    jest.spyOn(clock, 'now').mockImplementation(() => now() + offset);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await app.close();
  });

  it('records expiring-soon once 3 days before validUntil, then expires the quote after it; it stays expired', async () => {
    const quoteId = await f.createQuote(org, await f.submission(org), { validityDays: 5 });
    const draft = await f.createQuote(org, await f.submission(org), { validityDays: 5 });
    await f.send(org, quoteId);
    const token = await f.customerToken(quoteId);
    const sent = await app.request('GET', `/api/v1/quotes/${quoteId}`, { token: org.apiKey });

    offset = 2 * DAY + DAY / 2; // 2.5 days before validUntil
    const noticed = await until(() => eventTypes(quoteId), (types) => types.includes('quote.v1.expiringSoonNoticed'));
    expect(noticed.filter((t) => t === 'quote.v1.expiringSoonNoticed')).toHaveLength(1);
    await pause(100); // several more checks
    expect((await eventTypes(quoteId)).filter((t) => t === 'quote.v1.expiringSoonNoticed')).toHaveLength(1);
    // the notice is not a change of the quote: status and ETag stay
    const during = await app.request('GET', `/api/v1/quotes/${quoteId}`, { token: org.apiKey });
    expect([during.body.status, during.headers.etag]).toEqual(['sent', sent.headers.etag]);

    offset = 5 * DAY + 1_000;
    const expired = await until(() => f.quote(org, quoteId), (q) => q.status === 'expired');
    expect(expired.status).toBe('expired');
    expect((await app.request('GET', `/storefront/v1/quotes/${token}`)).body.status).toBe('expired');
    for (const res of [await app.request('POST', `/storefront/v1/quotes/${token}/accept`, { body: {} }), await app.request('POST', `/storefront/v1/quotes/${token}/reject`, { body: {} })]) {
      expect([res.status, res.body.error.code]).toEqual([409, 'quote_not_actionable']);
    }
    const patch = await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { notes: 'x', revise: true } });
    expect([patch.status, patch.body.error.code]).toEqual([409, 'quote_not_editable']);
    const send = await app.request('POST', `/api/v1/quotes/${quoteId}/send`, { token: org.apiKey, body: { recipients: ['ada@example.com'] } });
    expect([send.status, send.body.error.code]).toEqual([409, 'quote_not_sendable']);

    await pause(100);
    expect((await eventTypes(quoteId)).filter((t) => t === 'quote.v1.expired')).toHaveLength(1);
    // a draft never expires: it has not been offered to anyone
    expect((await f.quote(org, draft)).status).toBe('draft');
  });

  it('refuses to let the customer accept a quote past validUntil, even before the check has expired it', async () => {
    offset = 0;
    const quoteId = await f.createQuote(org, await f.submission(org), { validityDays: 1 });
    await f.send(org, quoteId);
    const token = await f.customerToken(quoteId);
    offset = DAY + 1;
    const res = await app.request('POST', `/storefront/v1/quotes/${token}/accept`, { body: {} });
    expect([res.status, res.body.error.code]).toEqual([409, 'quote_not_actionable']);
    expect(await until(() => f.quote(org, quoteId), (q) => q.status === 'expired')).toMatchObject({ status: 'expired' });
  });
});
