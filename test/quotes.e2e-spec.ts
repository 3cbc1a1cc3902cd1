import { fieldPaths, pause, QuoteFixtures, type Org } from './quotes-fixtures';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

const DAY = 24 * 60 * 60 * 1000;
const LIST_FIELDS = [
  'id', 'quoteNumber', 'version', 'status', 'submissionId', 'reference', 'validUntil', 'validityDays', 'subtotal', 'taxAmount', 'total',
  'taxRate', 'currency', 'sentAt', 'viewedAt', 'externalRef', 'createdAt', 'updatedAt',
].sort();
/** The quote without `pdf`, whose link is fresh on every read and whose status moves on its own. */
const withoutPdf = ({ pdf: _pdf, ...content }: Record<string, unknown>) => content;
const DETAIL_FIELDS = [...LIST_FIELDS, 'notes', 'lineItems', 'pdf'].sort();
const QUOTE_NUMBER = /^Q-\d{4}-\d{6}$/;

describe('quotes API', () => {
  let app: TestApp;
  let f: QuoteFixtures;
  let org: Org;
  let other: Org;
  let submissionId: string;
  let foreignSubmissionId: string;
  let basePricing: { lineItems: any[]; subtotal: number };

  const request = (method: string, url: string, body?: unknown, options: { token?: string; headers?: Record<string, string> } = {}) =>
    app.request(method, url, { token: options.token ?? org.apiKey, body, headers: options.headers });
  const create = (body: unknown = {}, id = submissionId, token = org.apiKey) => request('POST', `/api/v1/submissions/${id}/quotes`, body, { token });
  const get = (quoteId: string, token = org.apiKey) => request('GET', `/api/v1/quotes/${quoteId}`, undefined, { token });
  const patch = (quoteId: string, body: unknown, headers?: Record<string, string>) => request('PATCH', `/api/v1/quotes/${quoteId}`, body, { headers });
  const putLines = (quoteId: string, body: unknown, headers?: Record<string, string>) => request('PUT', `/api/v1/quotes/${quoteId}/line-items`, body, { headers });
  const send = (quoteId: string, body: unknown = { recipients: ['ada@example.com'] }, headers?: Record<string, string>) =>
    request('POST', `/api/v1/quotes/${quoteId}/send`, body, { headers });
  const versions = (quoteId: string, query = '') => request('GET', `/api/v1/quotes/${quoteId}/versions${query}`);
  const numberOf = (quoteNumber: string) => Number(quoteNumber.slice(-6));

  beforeAll(async () => {
    app = await TestApp.start();
    f = new QuoteFixtures(app);
    [org, other] = await Promise.all([f.organization(), f.organization()]);
    submissionId = await f.submission(org);
    foreignSubmissionId = await f.submission(other);
    basePricing = (await request('GET', `/api/v1/submissions/${submissionId}`)).body.basePricing;
  });
  afterAll(() => app.close());

  describe('POST /api/v1/submissions/{id}/quotes', () => {
    it("quotes the submission's own lines in the currency they were priced in, after the organization changed its currency", async () => {
      const changing = await f.organization();
      const id = await f.submission(changing);
      const submission = (await request('GET', `/api/v1/submissions/${id}`, undefined, { token: changing.apiKey })).body;
      expect(submission.currency).toBe('EUR');
      const patched = await app.request('PATCH', `/admin/v1/organizations/${changing.organizationId}`, { token: ADMIN_TOKEN, body: { currency: 'JPY' } });
      expect(patched.status).toBe(200);

      const own = await create({}, id, changing.apiKey);
      expect((await get(own.body.quoteId, changing.apiKey)).body).toMatchObject({ currency: 'EUR', subtotal: submission.basePricing.subtotal });
      // Lines the request brings are in the organization's currency now; a currency asked for wins.
      const supplied = await create({ lineItems: [{ description: 'Window', quantity: 1, unitPrice: 1000 }] }, id, changing.apiKey);
      expect((await get(supplied.body.quoteId, changing.apiKey)).body).toMatchObject({ currency: 'JPY', subtotal: 1000 });
      const asked = await create({ currency: 'USD' }, id, changing.apiKey);
      expect((await get(asked.body.quoteId, changing.apiKey)).body.currency).toBe('USD');
    });

    it("creates a draft from the submission's base pricing with the organization's defaults", async () => {
      const res = await create();
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['quoteId']);
      const fetched = await get(res.body.quoteId);
      const quote = fetched.body;
      expect(Object.keys(quote).sort()).toEqual(DETAIL_FIELDS);
      expect(quote).toMatchObject({
        id: res.body.quoteId,
        version: 1,
        status: 'draft',
        submissionId,
        reference: null,
        notes: null,
        taxRate: 21,
        validityDays: 30,
        currency: 'EUR',
        sentAt: null,
        viewedAt: null,
        externalRef: null,
      });
      // the outbox arms the PDF of version 1 after creation, so it may not exist yet (api-v1: "or null");
      // test/quote-pdfs-and-email.e2e-spec.ts follows it to ready
      expect([null, 'pending', 'generating', 'ready']).toContain(quote.pdf.status);
      expect(quote.quoteNumber).toMatch(QUOTE_NUMBER);
      expect(quote.quoteNumber.slice(2, 6)).toBe(String(new Date(quote.createdAt).getUTCFullYear()));
      expect(quote.validUntil).toBe(quote.createdAt + 30 * DAY);
      expect(quote.updatedAt).toBe(quote.createdAt);
      expect(quote.lineItems).toEqual(
        basePricing.lineItems.map((item, order) => ({
          description: item.description,
          quantity: item.quantity,
          unitPrice: item.unitPrice,
          total: item.total,
          itemType: item.itemType,
          order,
          itemKey: item.itemKey,
          externalRef: null,
        })),
      );
      // The §5 example: 551.88 + 21 % (115.8948, rounded half-up to the cent)
      expect([basePricing.subtotal, quote.subtotal, quote.taxAmount, quote.total]).toEqual([551.88, 551.88, 115.89, 667.77]);
      expect(fetched.headers.etag).toBe(`"1-${quote.updatedAt}"`);
    });

    it('moves the submission to quoted with the new quote as its latest, readable at once', async () => {
      const fresh = await f.submission(org);
      const quoteId = (await create({}, fresh)).body.quoteId;
      const submission = (await request('GET', `/api/v1/submissions/${fresh}`)).body;
      expect({ status: submission.status, latestQuoteId: submission.latestQuoteId }).toEqual({ status: 'quoted', latestQuoteId: quoteId });
    });

    it('takes the supplied terms and exactly the supplied line items: HTML stripped, unused fields ignored, totals computed', async () => {
      const res = await create({
        taxRate: 9,
        validityDays: 14,
        currency: 'USD',
        reference: '<b>PO-1</b>',
        notes: 'Delivery <i>in May</i>',
        lineItems: [
          { description: '<script>alert(1)</script>Window <em>A</em>', quantity: 2, unitPrice: 100.005, total: 1, itemType: 'window', itemKey: 'custom:1', externalRef: 'erp:line:1', id: 'ignored' },
          { description: 'Fitting', quantity: 1.5, unitPrice: 33.33 },
        ],
      });
      expect(res.status).toBe(201);
      const quote = (await get(res.body.quoteId)).body;
      expect(quote).toMatchObject({ taxRate: 9, validityDays: 14, currency: 'USD', reference: 'PO-1', notes: 'Delivery in May' });
      expect(quote.validUntil).toBe(quote.createdAt + 14 * DAY);
      expect(quote.lineItems).toEqual([
        { description: 'Window A', quantity: 2, unitPrice: 100.005, total: 200.01, itemType: 'window', order: 0, itemKey: 'custom:1', externalRef: 'erp:line:1' },
        { description: 'Fitting', quantity: 1.5, unitPrice: 33.33, total: 50, itemType: 'other', order: 1, itemKey: null, externalRef: null },
      ]);
      expect([quote.subtotal, quote.taxAmount, quote.total]).toEqual([250.01, 22.5, 272.51]);
    });

    it('rounds float noise as PUT adjustments does: amounts to 6 decimals, taxRate to 4', async () => {
      const res = await create({
        taxRate: 0.07 * 100, // 7.000000000000001
        lineItems: [
          { description: 'Markup 10%', quantity: 1, unitPrice: 551.88 * 1.1 }, // 607.0680000000001
          { description: 'Glass', quantity: 0.1 + 0.2, unitPrice: 10 }, // 0.30000000000000004
        ],
      });
      expect(res.status).toBe(201);
      const quote = (await get(res.body.quoteId)).body;
      expect(quote.lineItems.map((l: any) => [l.quantity, l.unitPrice, l.total])).toEqual([[1, 607.068, 607.07], [0.3, 10, 3]]);
      expect([quote.taxRate, quote.subtotal, quote.taxAmount, quote.total]).toEqual([7, 610.07, 42.7, 652.77]);
    });

    it("accepts the submission's base line items sent back unchanged, in their display order", async () => {
      const res = await create({ lineItems: [...basePricing.lineItems].reverse() });
      expect(res.status).toBe(201);
      const quote = (await get(res.body.quoteId)).body;
      expect(quote.lineItems.map((l: any) => l.itemKey)).toEqual(basePricing.lineItems.map((l) => l.itemKey));
      expect(quote.subtotal).toBe(basePricing.subtotal);
    });

    it('gives each new quote of the organization the next number; another organization counts on its own', async () => {
      const first = (await get((await create()).body.quoteId)).body.quoteNumber;
      const second = (await get((await create()).body.quoteId)).body.quoteNumber;
      expect(numberOf(second)).toBe(numberOf(first) + 1);
      const foreign = (await get((await create({}, foreignSubmissionId, other.apiKey)).body.quoteId, other.apiKey)).body.quoteNumber;
      expect(numberOf(foreign)).toBe(1);
    });

    it("answers 404 for an unknown submission and another organization's", async () => {
      for (const id of ['sub_unknown', foreignSubmissionId]) {
        const res = await create({}, id);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    });

    it.each([
      ['quantity 0', { lineItems: [{ description: 'x', quantity: 0, unitPrice: 1 }] }, ['lineItems[0].quantity']],
      ['a negative unit price', { lineItems: [{ description: 'x', quantity: 1, unitPrice: 1 }, { description: 'y', quantity: 1, unitPrice: -0.01 }] }, ['lineItems[1].unitPrice']],
      ['a description that is only HTML', { lineItems: [{ description: '<b></b>', quantity: 1, unitPrice: 1 }] }, ['lineItems[0].description']],
      ['a description over 2000 characters', { lineItems: [{ description: 'x'.repeat(2001), quantity: 1, unitPrice: 1 }] }, ['lineItems[0].description']],
      ['an unknown item type', { lineItems: [{ description: 'x', quantity: 1, unitPrice: 1, itemType: 'roof' }] }, ['lineItems[0].itemType']],
      ['a missing description', { lineItems: [{ quantity: 1, unitPrice: 1 }] }, ['lineItems[0].description']],
      ['more than 200 line items', { lineItems: Array.from({ length: 201 }, () => ({ description: 'x', quantity: 1, unitPrice: 1 })) }, ['lineItems']],
      ['no line items', { lineItems: [] }, ['lineItems']],
      ['a tax rate over 100', { taxRate: 101 }, ['taxRate']],
      ['validityDays 0', { validityDays: 0 }, ['validityDays']],
      ['validityDays null', { validityDays: null }, ['validityDays']],
      ['a lower-case currency', { currency: 'eur' }, ['currency']],
      ['a currency that is not an ISO 4217 code', { currency: 'ZZZ' }, ['currency']],
      ['an unknown field', { discount: 5 }, ['discount']],
    ])('refuses %s with 422 and field paths, and creates nothing', async (_, body, paths) => {
      const before = (await request('GET', `/api/v1/quotes?submissionId=${submissionId}&limit=100`)).body.data.length;
      const res = await create(body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(fieldPaths(res)).toEqual(expect.arrayContaining(paths));
      expect((await request('GET', `/api/v1/quotes?submissionId=${submissionId}&limit=100`)).body.data).toHaveLength(before);
    });

    it('never spends a number on a refused request', async () => {
      const before = numberOf((await get((await create()).body.quoteId)).body.quoteNumber);
      expect((await create({ taxRate: -1 })).status).toBe(422);
      expect((await create({}, 'sub_unknown')).status).toBe(404);
      expect(numberOf((await get((await create()).body.quoteId)).body.quoteNumber)).toBe(before + 1);
    });

    it('answers 401 without a valid key and 403 read_only_key for a read-only key', async () => {
      const missing = await app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { body: {} });
      expect([missing.status, missing.body.error.code]).toEqual([401, 'unauthorized']);
      const readOnly = await create({}, submissionId, org.readOnlyKey);
      expect([readOnly.status, readOnly.body.error.code]).toEqual([403, 'read_only_key']);
    });
  });

  describe('GET /api/v1/quotes and GET /api/v1/quotes/{id}', () => {
    let listOrg: Org;
    let subA: string;
    let subB: string;
    const made: string[] = [];

    beforeAll(async () => {
      listOrg = await f.organization();
      [subA, subB] = [await f.submission(listOrg), await f.submission(listOrg)];
      for (const sub of [subA, subB, subA, subB, subA]) {
        made.push(await f.createQuote(listOrg, sub));
        await pause(2);
      }
      await f.send(listOrg, made[1]);
      await f.send(listOrg, made[2]);
    });

    async function listAll(query: string, limit = 2): Promise<string[]> {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await request('GET', `/api/v1/quotes?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`, undefined, { token: listOrg.apiKey });
        expect(res.status).toBe(200);
        expect(res.body.data.length).toBeLessThanOrEqual(limit);
        for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(LIST_FIELDS);
        ids.push(...res.body.data.map((q: any) => q.id));
        cursor = res.body.nextCursor;
      } while (cursor);
      return ids;
    }

    it('lists the organization quotes newest first, page by page', async () => {
      expect(await listAll('')).toEqual([...made].reverse());
      const firstPage = (await request('GET', '/api/v1/quotes', undefined, { token: listOrg.apiKey })).body;
      expect(firstPage).toMatchObject({ nextCursor: null });
      expect(firstPage.data).toHaveLength(5);
    });

    it('filters by status and by submission', async () => {
      expect(await listAll('&status=sent')).toEqual([made[2], made[1]]);
      expect(await listAll('&status=draft')).toEqual([made[4], made[3], made[0]]);
      expect(await listAll(`&submissionId=${subB}`)).toEqual([made[3], made[1]]);
      expect(await listAll(`&submissionId=${subA}&status=draft`)).toEqual([made[4], made[0]]);
      expect(await listAll('&status=accepted')).toEqual([]);
    });

    it('is readable with a read-only key', async () => {
      expect((await request('GET', '/api/v1/quotes', undefined, { token: listOrg.readOnlyKey })).status).toBe(200);
      expect((await get(made[0], listOrg.readOnlyKey)).status).toBe(200);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['cursor=not-a-cursor!', 'cursor'],
      ['status=open', 'status'],
      ['submissionId=', 'submissionId'],
    ])('refuses %s with 422', async (query, path) => {
      const res = await request('GET', `/api/v1/quotes?${query}`, undefined, { token: listOrg.apiKey });
      expect(res.status).toBe(422);
      expect(fieldPaths(res)).toContain(path);
    });

    it("never shows another organization's quotes", async () => {
      const foreign = await listAll('');
      expect((await request('GET', '/api/v1/quotes?limit=100', undefined, { token: other.apiKey })).body.data.map((q: any) => q.id)).not.toEqual(expect.arrayContaining([foreign[0]]));
      const res = await get(made[0], other.apiKey);
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
      expect((await get('quo_unknown', listOrg.apiKey)).status).toBe(404);
      expect((await request('GET', `/api/v1/quotes/${made[0]}/versions`, undefined, { token: other.apiKey })).status).toBe(404);
    });

    it('answers 401 without a key', async () => {
      expect((await app.request('GET', '/api/v1/quotes')).status).toBe(401);
      expect((await app.request('GET', `/api/v1/quotes/${made[0]}`)).status).toBe(401);
    });
  });

  describe('PATCH /api/v1/quotes/{id}', () => {
    it('applies term changes to a draft directly: same version, totals and validUntil recomputed', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      const before = (await get(quoteId)).body;
      const res = await patch(quoteId, { taxRate: 9, validityDays: 10, notes: '<p>Call first</p>', reference: 'PO-7' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ quoteId, version: 1 });
      const after = (await get(quoteId)).body;
      expect(after).toMatchObject({ version: 1, status: 'draft', taxRate: 9, validityDays: 10, notes: 'Call first', reference: 'PO-7', subtotal: 551.88, taxAmount: 49.67, total: 601.55 });
      expect(after.validUntil).toBe(before.createdAt + 10 * DAY);
      expect(res.headers.etag).toBe(`"1-${after.updatedAt}"`);
      // null clears a text term
      expect((await patch(quoteId, { notes: null })).status).toBe(200);
      expect((await get(quoteId)).body.notes).toBeNull();
    });

    it('rounds a taxRate to 4 decimals: 0.07 × 100 on a quote at 7 % changes nothing', async () => {
      const quoteId = await f.createQuote(org, submissionId, { taxRate: 7 });
      const before = await get(quoteId);
      const res = await patch(quoteId, { taxRate: 0.07 * 100 });
      expect(res.status).toBe(200);
      expect(res.headers.etag).toBe(before.headers.etag);
      expect((await patch(quoteId, { taxRate: 7.00004999 })).status).toBe(200);
      expect((await get(quoteId)).body).toMatchObject({ taxRate: 7, updatedAt: before.body.updatedAt });
      expect((await patch(quoteId, { taxRate: 7.00005 })).status).toBe(200);
      expect((await get(quoteId)).body.taxRate).toBe(7.0001);
    });

    it('re-rounds line totals when the currency changes (amounts are not converted)', async () => {
      const quoteId = await f.createQuote(org, submissionId, { lineItems: [{ description: 'x', quantity: 3, unitPrice: 0.5 }] });
      expect((await patch(quoteId, { currency: 'JPY', taxRate: 0 })).status).toBe(200);
      expect((await get(quoteId)).body).toMatchObject({ currency: 'JPY', lineItems: [{ unitPrice: 0.5, total: 2 }], subtotal: 2, total: 2 });
    });

    it('takes only ISO 4217 currency codes: ZZZ and the test code XTS are 422 on the field and change nothing', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      const before = (await get(quoteId)).body;
      for (const currency of ['ZZZ', 'XTS']) {
        const res = await patch(quoteId, { currency });
        expect([res.status, res.body.error.code, res.body.error.details.fields]).toEqual([422, 'validation_error', [{ path: 'currency', message: 'currency must be an ISO 4217 code such as EUR' }]]);
      }
      expect(withoutPdf((await get(quoteId)).body)).toEqual(withoutPdf(before));
      for (const currency of ['USD', 'GBP', 'CHF', 'PLN', 'SEK', 'EUR']) {
        expect((await patch(quoteId, { currency })).status).toBe(200);
        expect((await get(quoteId)).body.currency).toBe(currency);
      }
    });

    it.each([
      ['an empty body', {}],
      ['only revise', { revise: true }],
      ['an unknown field', { status: 'sent' }],
      ['validityDays null', { validityDays: null }],
      ['a non-boolean revise', { notes: 'x', revise: 'yes' }],
      ['an externalRef over 200 characters', { externalRef: 'x'.repeat(201) }],
    ])('refuses %s with 422 and changes nothing', async (_, body) => {
      const quoteId = await f.createQuote(org, submissionId);
      const before = (await get(quoteId)).body;
      const res = await patch(quoteId, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.fields.length).toBeGreaterThan(0);
      expect(withoutPdf((await get(quoteId)).body)).toEqual(withoutPdf(before));
    });

    it('refuses a change to a sent quote without revise: 409 revision_required and nothing is applied, not even externalRef', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      await f.send(org, quoteId);
      const before = (await get(quoteId)).body;
      const res = await patch(quoteId, { notes: 'new', externalRef: 'crm:quote:1' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('revision_required');
      expect(withoutPdf((await get(quoteId)).body)).toEqual(withoutPdf(before));
    });

    it('revises a sent quote with revise: true: next version, back to draft, the sent version kept in the history', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      await f.send(org, quoteId);
      const sent = (await get(quoteId)).body;
      const res = await patch(quoteId, { taxRate: 0, revise: true });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ quoteId, version: 2 });
      const revised = (await get(quoteId)).body;
      expect(revised).toMatchObject({ version: 2, status: 'draft', taxRate: 0, total: 551.88, sentAt: sent.sentAt });
      const history = (await versions(quoteId)).body.data;
      expect(history.map((v: any) => [v.version, v.snapshot.status])).toEqual([[2, 'draft'], [1, 'sent']]);
      const { pdf: _pdf, ...sentContent } = sent;
      expect(history[1].snapshot).toEqual(sentContent);
      expect(history[0].changeDescription).toBe('Terms changed: taxRate');
    });

    it('changes externalRef alone in every status without a new version', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      await f.send(org, quoteId);
      const res = await patch(quoteId, { externalRef: 'crm:quote:42' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ quoteId, version: 1 });
      expect((await get(quoteId)).body).toMatchObject({ status: 'sent', version: 1, externalRef: 'crm:quote:42' });
      expect((await patch(quoteId, { externalRef: null })).status).toBe(200);
      expect((await get(quoteId)).body.externalRef).toBeNull();
    });

    it('keeps an externalRef verbatim on the quote and its lines, and "" clears it as null does, as on submissions and contacts', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      for (const externalRef of [' a:b ', '<b>x</b>']) {
        expect((await patch(quoteId, { externalRef })).status).toBe(200);
        expect((await get(quoteId)).body.externalRef).toBe(externalRef);
      }
      expect((await patch(quoteId, { externalRef: '' })).status).toBe(200);
      expect((await get(quoteId)).body.externalRef).toBeNull();

      const lines = [' a:b ', '<b>x</b>', ''].map((externalRef) => ({ description: 'Window', quantity: 1, unitPrice: 10, externalRef }));
      const put = await app.request('PUT', `/api/v1/quotes/${quoteId}/line-items`, { token: org.apiKey, body: { lineItems: lines } });
      expect(put.status).toBe(200);
      expect((await get(quoteId)).body.lineItems.map((line: { externalRef: string | null }) => line.externalRef)).toEqual([' a:b ', '<b>x</b>', null]);
    });

    it('answers 404 for an unknown quote and for another organization, 403 for a read-only key', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      expect((await patch('quo_unknown', { notes: 'x' })).status).toBe(404);
      const foreign = await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: other.apiKey, body: { notes: 'x' } });
      expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found']);
      const readOnly = await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.readOnlyKey, body: { notes: 'x' } });
      expect([readOnly.status, readOnly.body.error.code]).toEqual([403, 'read_only_key']);
    });
  });

  describe('PUT /api/v1/quotes/{id}/line-items', () => {
    const lines = [{ description: 'Triple glazing upgrade', quantity: 2, unitPrice: 45.5, itemType: 'material' }];

    it('replaces the breakdown of a draft directly, answers the new totals and keeps the previous breakdown in the history', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      const res = await putLines(quoteId, { lineItems: lines, changeDescription: 'Customer wants <b>triple</b> glazing' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ quoteId, version: 1, subtotal: 91, taxAmount: 19.11, total: 110.11 });
      const quote = (await get(quoteId)).body;
      expect(quote.lineItems).toEqual([{ description: 'Triple glazing upgrade', quantity: 2, unitPrice: 45.5, total: 91, itemType: 'material', order: 0, itemKey: null, externalRef: null }]);
      expect(res.headers.etag).toBe(`"1-${quote.updatedAt}"`);
      const history = (await versions(quoteId)).body.data;
      expect(history.map((v: any) => [v.version, v.changeDescription, v.snapshot.subtotal])).toEqual([
        [1, 'Customer wants triple glazing', 91],
        [1, null, 551.88],
      ]);
      expect(history[1].snapshot.lineItems).toHaveLength(basePricing.lineItems.length);
    });

    it("takes a quote's own lines back as GET shows them (null itemKey and externalRef included): 200 and the same lines", async () => {
      const quoteId = await f.createQuote(org, submissionId, { lineItems: [...basePricing.lineItems, { description: 'Fitting', quantity: 1, unitPrice: 50, externalRef: 'erp:7' }] });
      const read = (await get(quoteId)).body;
      expect(read.lineItems.map((l: any) => [l.itemKey === null, l.externalRef])).toEqual([...basePricing.lineItems.map(() => [false, null]), [true, 'erp:7']]);

      const unchanged = await putLines(quoteId, { lineItems: read.lineItems });
      expect(unchanged.status).toBe(200);
      expect(unchanged.body).toMatchObject({ subtotal: read.subtotal, total: read.total });
      expect((await get(quoteId)).body.lineItems).toEqual(read.lineItems);

      // read → change one line → write back
      const edited = read.lineItems.map((l: any, i: number) => (i === 0 ? { ...l, quantity: 2 } : l));
      expect((await putLines(quoteId, { lineItems: edited })).status).toBe(200);
      const after = (await get(quoteId)).body.lineItems;
      expect(after[0]).toEqual({ ...read.lineItems[0], quantity: 2, total: expect.any(Number) });
      expect(after.slice(1)).toEqual(read.lineItems.slice(1));

      // an earlier breakdown, as the version history shows it
      const original = (await versions(quoteId)).body.data.at(-1);
      expect(original.changeDescription).toBeNull();
      expect((await putLines(quoteId, { lineItems: original.snapshot.lineItems })).status).toBe(200);
      expect((await get(quoteId)).body.lineItems).toEqual(read.lineItems);
    });

    it('rounds float noise in quantity and unitPrice to 6 decimals', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      const res = await putLines(quoteId, { lineItems: [{ description: 'Markup 10%', quantity: 1, unitPrice: 551.88 * 1.1 }, { description: 'Glass', quantity: 0.1 + 0.2, unitPrice: 10 }] });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ subtotal: 610.07 });
      expect((await get(quoteId)).body.lineItems.map((l: any) => [l.quantity, l.unitPrice])).toEqual([[1, 607.068], [0.3, 10]]);
    });

    it('on a sent quote: 409 revision_required without revise, the next version with revise', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      await f.send(org, quoteId);
      const refused = await putLines(quoteId, { lineItems: lines });
      expect([refused.status, refused.body.error.code]).toEqual([409, 'revision_required']);
      expect((await get(quoteId)).body).toMatchObject({ version: 1, status: 'sent', subtotal: 551.88 });
      const res = await putLines(quoteId, { lineItems: lines, revise: true });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ quoteId, version: 2, subtotal: 91, taxAmount: 19.11, total: 110.11 });
      expect((await get(quoteId)).body).toMatchObject({ version: 2, status: 'draft' });
    });

    it.each([
      ['no lineItems', {}, 'lineItems'],
      ['an empty list', { lineItems: [] }, 'lineItems'],
      ['201 items', { lineItems: Array.from({ length: 201 }, () => lines[0]) }, 'lineItems'],
      ['a bad quantity', { lineItems: [{ ...lines[0], quantity: -1 }] }, 'lineItems[0].quantity'],
      ['a non-object item', { lineItems: ['x'] }, 'lineItems[0]'],
      ['a long change description', { lineItems: lines, changeDescription: 'x'.repeat(501) }, 'changeDescription'],
    ])('refuses %s with 422 and changes nothing', async (_, body, path) => {
      const quoteId = await f.createQuote(org, submissionId);
      const before = (await get(quoteId)).body;
      const res = await putLines(quoteId, body);
      expect(res.status).toBe(422);
      expect(fieldPaths(res)).toContain(path);
      expect(withoutPdf((await get(quoteId)).body)).toEqual(withoutPdf(before));
    });
  });

  describe('POST /api/v1/quotes/{id}/send', () => {
    it('sends a draft: 200 with status and sentAt, validUntil from the send, and the e-mail with the customer link from the outbox', async () => {
      const quoteId = await f.createQuote(org, submissionId, { validityDays: 20 });
      const res = await send(quoteId, { recipients: ['ada@example.com', ' ADA@example.com', 'office@example.com '], locale: 'de' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ quoteId, status: 'sent', sentAt: expect.any(Number) });
      const quote = (await get(quoteId)).body;
      expect(quote).toMatchObject({ status: 'sent', sentAt: res.body.sentAt, validUntil: res.body.sentAt + 20 * DAY });
      const [mail] = await f.awaitMails(quoteId);
      expect(mail).toMatchObject({ to: ['ada@example.com', 'office@example.com'], locale: 'de', quoteNumber: quote.quoteNumber });
      expect(mail.subject).toContain(quote.quoteNumber);
      expect(mail.quoteUrl).toMatch(/^http:\/\/localhost:3000\/q\/[0-9A-Za-z]{43}$/);
      expect(mail.text).toContain(mail.quoteUrl);
    });

    it('re-sends a sent quote with the same customer link and a new validity', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      const first = (await send(quoteId)).body;
      await pause(2);
      const again = await send(quoteId);
      expect(again.status).toBe(200);
      expect(again.body.sentAt).toBeGreaterThan(first.sentAt);
      const mails = await f.awaitMails(quoteId, 2);
      expect(new Set(mails.map((m) => m.quoteUrl)).size).toBe(1);
      expect((await get(quoteId)).body.validUntil).toBe(again.body.sentAt + 30 * DAY);
    });

    it('mails in the customer locale of the submission by default', async () => {
      const german = await f.submission(org, { locale: 'de' });
      const quoteId = await f.createQuote(org, german);
      await f.send(org, quoteId);
      expect((await f.awaitMails(quoteId))[0].locale).toBe('de');
    });

    it.each([
      ['de-DE', 'en', 'de'],
      ['NL', 'en', 'nl'],
      ['nl-BE', 'de', 'nl'],
      ['en-GB', 'de', 'en'],
      ['fr', 'de', 'de'],
      ['fr-CH', 'nl', 'nl'],
      [null, 'nl', 'nl'],
    ])('takes the language tag %s: a customer in %s gets the mail in %s', async (locale, customerLocale, mailLocale) => {
      const quoteId = await f.createQuote(org, await f.submission(org, { locale: customerLocale }));
      await f.send(org, quoteId, { recipients: ['ada@example.com'], locale });
      const [mail] = await f.awaitMails(quoteId);
      expect(mail.locale).toBe(mailLocale);
      expect((await request('GET', `/api/v1/quotes/${quoteId}/emails`)).body.data[0].locale).toBe(mailLocale);
    });

    it("refuses to send a viewed quote with 409 quote_not_sendable", async () => {
      const quoteId = await f.createQuote(org, submissionId);
      await f.send(org, quoteId);
      expect((await app.request('GET', `/storefront/v1/quotes/${await f.customerToken(quoteId)}`)).body.status).toBe('viewed');
      const res = await send(quoteId);
      expect([res.status, res.body.error.code]).toEqual([409, 'quote_not_sendable']);
    });

    it.each([
      ['no recipients', {}, 'recipients'],
      ['an empty list', { recipients: [] }, 'recipients'],
      ['21 recipients', { recipients: Array.from({ length: 21 }, (_, i) => `r${i}@example.com`) }, 'recipients'],
      ['an invalid address', { recipients: ['ada@example.com', 'not-an-email'] }, 'recipients[1]'],
      ['an address that is not a string', { recipients: ['ada@example.com', 7] }, 'recipients[1]'],
      ['an address over 254 characters', { recipients: [`${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`] }, 'recipients[0]'],
      ['a locale that is no language tag', { recipients: ['ada@example.com'], locale: 'de DE' }, 'locale'],
      ['a locale over 35 characters', { recipients: ['ada@example.com'], locale: `de-${'abcdefgh-'.repeat(4)}x` }, 'locale'],
    ])('refuses %s with 422 and sends nothing', async (_, body, path) => {
      const quoteId = await f.createQuote(org, submissionId);
      const res = await send(quoteId, body);
      expect(res.status).toBe(422);
      expect(fieldPaths(res)).toContain(path);
      expect((await get(quoteId)).body.status).toBe('draft');
    });

    it('answers 404 for another organization and 403 for a read-only key', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      expect((await app.request('POST', `/api/v1/quotes/${quoteId}/send`, { token: other.apiKey, body: { recipients: ['a@example.com'] } })).status).toBe(404);
      const readOnly = await app.request('POST', `/api/v1/quotes/${quoteId}/send`, { token: org.readOnlyKey, body: { recipients: ['a@example.com'] } });
      expect([readOnly.status, readOnly.body.error.code]).toEqual([403, 'read_only_key']);
    });
  });

  describe('If-Match', () => {
    it('applies a write whose If-Match is the current ETag and refuses a stale one with 412, changing nothing', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      const etag = (await get(quoteId)).headers.etag as string;
      await pause(2);
      const first = await patch(quoteId, { notes: 'first' }, { 'if-match': etag });
      expect(first.status).toBe(200);
      const current = (await get(quoteId)).body;
      for (const res of [
        await patch(quoteId, { notes: 'second' }, { 'if-match': etag }),
        await putLines(quoteId, { lineItems: [{ description: 'x', quantity: 1, unitPrice: 1 }] }, { 'if-match': etag }),
        await send(quoteId, { recipients: ['ada@example.com'] }, { 'if-match': etag }),
      ]) {
        expect(res.status).toBe(412);
        expect(res.body.error.code).toBe('precondition_failed');
      }
      expect(withoutPdf((await get(quoteId)).body)).toEqual(withoutPdf(current));
      expect((await send(quoteId, { recipients: ['ada@example.com'] }, { 'if-match': first.headers.etag as string })).status).toBe(200);
      expect((await patch(quoteId, { externalRef: 'x' }, { 'if-match': '*' })).status).toBe(200);
    });
  });

  describe('GET /api/v1/quotes/{id}/versions', () => {
    it('keeps every sent version reproducible, newest first, page by page', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      const sentVersions: any[] = [];
      for (let version = 1; version <= 3; version++) {
        await f.send(org, quoteId);
        const { pdf: _pdf, ...content } = (await get(quoteId)).body;
        sentVersions.push(content);
        await patch(quoteId, { notes: `for version ${version + 1}`, revise: true });
      }
      const entries: any[] = [];
      let cursor: string | null = null;
      do {
        const res = await versions(quoteId, `?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        entries.push(...res.body.data);
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(entries.map((e) => e.version)).toEqual([4, 3, 2, 1]);
      for (const entry of entries) expect(Object.keys(entry).sort()).toEqual(['changeDescription', 'createdAt', 'snapshot', 'version']);
      expect(entries.slice(1).map((e) => e.snapshot)).toEqual([...sentVersions].reverse());
      expect(entries[0].snapshot).toMatchObject({ version: 4, status: 'draft', notes: 'for version 4' });
    });

    it('refuses a cursor of another list with 422', async () => {
      const quoteId = await f.createQuote(org, submissionId);
      const listCursor = Buffer.from(JSON.stringify({ l: 'quotes', a: [1, 'x'] })).toString('base64url');
      const res = await versions(quoteId, `?cursor=${listCursor}`);
      expect(res.status).toBe(422);
      expect(fieldPaths(res)).toEqual(['cursor']);
    });
  });
});
