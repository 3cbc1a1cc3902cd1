import { EventStore } from '@lib/event-store';
import { quoteStream } from '@lib/quotes/domain/quote.events';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

/**
 * decisions §5, docs/decisions/pricing.md "Bounds": every amount the service computes is exact as
 * a JSON number, i.e. at most 10^15 minor units (10 000 000 000 000.00 EUR). A write whose price
 * would be larger is refused with 422 `validation_error` and changes nothing that is stored.
 */
const LARGEST_EUR = 'the price exceeds the largest amount the service handles in EUR (10000000000000.00)';
const LARGEST_KWD = 'the price exceeds the largest amount the service handles in KWD (1000000000000.000)';
const MAX_MM = 100_000;

/** Sizes up to the template bound; 999 999 999.99 per m², 0.01, then 1000% on both (the reviewer's reproduction). */
function largeTemplate(rate = 999_999_999.99): Record<string, unknown> {
  const size = { minWidth: 100, maxWidth: MAX_MM, minHeight: 100, maxHeight: MAX_MM };
  return {
    name: 'Curtain wall',
    slug: 'curtain-wall',
    productCategory: 'window',
    constraints: size,
    components: [{ id: 'F', name: 'Fixed glazing', type: 'F', constraints: size }],
    optionGroups: [],
    options: [],
    materials: [],
    pricingRules: [
      { level: 'template', calculation: 'area', rate },
      { level: 'template', calculation: 'fixed', amount: 0.01 },
      { level: 'template', calculation: 'percentage', percent: 1000 },
    ],
  };
}

/** A square window of `mm` × `mm` with one full-size fixed pane. */
const squareWindow = (mm: number, unitAmount: number) => ({ width: mm, height: mm, unitAmount, components: [{ id: 'c1', componentId: 'F', width: mm, height: mm }] });

const refusal = (path: string, message = LARGEST_EUR) => ({
  error: { code: 'validation_error', message: `${message[0].toUpperCase()}${message.slice(1)}. Nothing was changed.`, details: { fields: [{ path, message }] } },
});

describe('amounts beyond the largest a JSON number holds exactly', () => {
  let app: TestApp;
  let org: Awaited<ReturnType<TestApp['createOrganization']>>;

  const createTemplate = async (body: Record<string, unknown>) => {
    const res = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/templates`, { token: ADMIN_TOKEN, body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const api = (method: string, url: string, body?: unknown) => app.request(method, url, { token: org.apiKey, body });
  const streamOf = async (streamId: string) => (await app.get(EventStore).readStream(streamId)).map((e) => e.type);

  /** A session on `templateId` with `configuration` saved. */
  async function configuredSession(templateId: string, configuration: Record<string, unknown>) {
    const started = await app.request('POST', `/storefront/v1/${org.slug}/sessions`, { body: { templateId } });
    expect(started.status).toBe(201);
    const { sessionId, customerToken } = started.body;
    const session = {
      sessionId,
      configure: (body: unknown) => app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body }),
      submit: () => app.request('POST', `/storefront/v1/sessions/${sessionId}/submit`, { token: customerToken, body: { customer: { name: 'Ada Lovelace', email: 'ada@example.com' } } }),
      read: async () => (await app.request('GET', `/storefront/v1/sessions/${sessionId}`, { token: customerToken })).body,
    };
    expect((await session.configure(configuration)).status).toBe(200);
    return session;
  }

  beforeAll(async () => {
    app = await TestApp.start();
    org = await app.createOrganization({ settings: { quoteDefaults: { taxRate: 0, validityDays: 30 } } });
  });
  afterAll(() => app.close());

  describe('configuration prices', () => {
    it('refuses the reviewer\'s configuration (100 000 × 100 000 mm, 999 units) with 422 and keeps the saved configuration and its price', async () => {
      const session = await configuredSession(await createTemplate(largeTemplate()), squareWindow(1000, 1));
      const before = await session.read();
      // 1 m²: 999 999 999.99 + 0.01 + 1000% = 11 000 000 000.00 per unit, exact
      expect(before.basePricing.subtotal).toBe(11_000_000_000);

      const huge = await session.configure(squareWindow(MAX_MM, 999));
      expect(huge.status).toBe(422);
      // one unit alone is past the largest amount: the configuration as a whole is named
      expect(huge.body).toEqual(refusal(''));
      const tooMany = await session.configure(squareWindow(1000, 999));
      expect(tooMany.status).toBe(422);
      expect(tooMany.body).toEqual(refusal('unitAmount'));

      expect(await session.read()).toEqual({ ...before, lastActivityAt: expect.any(Number), expiresAt: expect.any(Number) });
      expect(await streamOf(`session-${session.sessionId}`)).toEqual(['session.v1.started', 'session.v1.configurationChanged']);
    });

    it('refuses a submit whose price, priced again with the template as it is now, is too large; the session stays active', async () => {
      const templateId = await createTemplate(largeTemplate(1));
      const session = await configuredSession(templateId, squareWindow(MAX_MM, 1));
      // 10 000 m² at 1.00 + 0.01, +1000%: 110 000.11 per unit
      expect((await session.read()).basePricing.subtotal).toBe(110_000.11);
      const raised = await app.request('PUT', `/admin/v1/organizations/${org.organizationId}/templates/${templateId}`, { token: ADMIN_TOKEN, body: largeTemplate() });
      expect(raised.status).toBe(200);

      const res = await session.submit();
      expect(res.status).toBe(422);
      expect(res.body).toEqual(refusal('configuration'));
      expect(await session.read()).toMatchObject({ status: 'active', submissionId: null, basePricing: { subtotal: 110_000.11 } });
      expect(await streamOf(`session-${session.sessionId}`)).toEqual(['session.v1.started', 'session.v1.configurationChanged']);
    });
  });

  describe('quotes', () => {
    let submissionId: string;
    /** 200 lines at the line-item bounds: 2 × 10^17 EUR */
    const boundLines = Array.from({ length: 200 }, (_, i) => ({ description: `Line ${i + 1}`, quantity: 1_000_000, unitPrice: 1_000_000_000 }));

    beforeAll(async () => {
      const session = await configuredSession(await createTemplate(largeTemplate()), squareWindow(1000, 1));
      const submitted = await session.submit();
      expect(submitted.status).toBe(201);
      submissionId = submitted.body.submissionId;
    });

    it('refuses to create a quote whose total would be too large: no quote, the submission is not quoted', async () => {
      const res = await api('POST', `/api/v1/submissions/${submissionId}/quotes`, { lineItems: boundLines });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(refusal('lineItems'));
      expect((await api('GET', `/api/v1/quotes?submissionId=${submissionId}`)).body.data).toEqual([]);
      expect((await api('GET', `/api/v1/submissions/${submissionId}`)).body).toMatchObject({ status: 'new', latestQuoteId: null });
    });

    it('refuses a quote of a submission priced at the largest amount once the organization\'s tax is added, naming the request, not line items it did not send', async () => {
      const taxed = await app.createOrganization({ settings: { quoteDefaults: { taxRate: 21, validityDays: 30 } } });
      const template = { ...largeTemplate(1_000_000_000), pricingRules: [{ level: 'template', calculation: 'area', rate: 1_000_000_000 }] };
      const templateId = (await app.request('POST', `/admin/v1/organizations/${taxed.organizationId}/templates`, { token: ADMIN_TOKEN, body: template })).body.id;
      const started = (await app.request('POST', `/storefront/v1/${taxed.slug}/sessions`, { body: { templateId } })).body;
      // 10 000 m² at 1 000 000 000 a m²: 10 000 000 000 000.00 EUR, the largest amount itself
      const configured = await app.request('PUT', `/storefront/v1/sessions/${started.sessionId}/configuration`, { token: started.customerToken, body: squareWindow(MAX_MM, 1) });
      expect([configured.status, configured.body.basePricing.subtotal]).toEqual([200, 10_000_000_000_000]);
      const submitted = await app.request('POST', `/storefront/v1/sessions/${started.sessionId}/submit`, { token: started.customerToken, body: { customer: { name: 'Ada', email: 'ada@example.com' } } });
      expect(submitted.status).toBe(201);
      const res = await app.request('POST', `/api/v1/submissions/${submitted.body.submissionId}/quotes`, { token: taxed.apiKey, body: {} });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(refusal(''));
    });

    it('refuses line items, a currency and a tax rate that take the total past it, and the quote reads back unchanged', async () => {
      // 9 000 × 1 000 000 000 = 9 000 000 000 000.00 EUR, under the 10 000 000 000 000.00 of EUR
      const created = await api('POST', `/api/v1/submissions/${submissionId}/quotes`, { lineItems: [{ description: 'Facade', quantity: 9_000, unitPrice: 1_000_000_000 }] });
      expect(created.status).toBe(201);
      const { quoteId } = created.body;
      const read = () => api('GET', `/api/v1/quotes/${quoteId}`);
      const before = await read();
      expect(before.body).toMatchObject({ currency: 'EUR', subtotal: 9e12, taxAmount: 0, total: 9e12, lineItems: [{ total: 9e12 }] });
      const withoutPdf = ({ pdf: _pdf, ...quote }: Record<string, unknown>) => quote;

      const lines = await api('PUT', `/api/v1/quotes/${quoteId}/line-items`, { lineItems: boundLines });
      expect([lines.status, lines.body]).toEqual([422, refusal('lineItems')]);
      const dinar = await api('PATCH', `/api/v1/quotes/${quoteId}`, { currency: 'KWD' });
      expect([dinar.status, dinar.body]).toEqual([422, refusal('currency', LARGEST_KWD)]);
      const tax = await api('PATCH', `/api/v1/quotes/${quoteId}`, { taxRate: 11.1112 });
      expect([tax.status, tax.body]).toEqual([422, refusal('taxRate')]);

      const after = await read();
      expect(after.headers.etag).toBe(before.headers.etag);
      expect(withoutPdf(after.body)).toEqual(withoutPdf(before.body));
      expect(await streamOf(quoteStream(quoteId))).toEqual(['quote.v1.created']);

      // just under the largest amount, every amount is exact
      const fits = await api('PATCH', `/api/v1/quotes/${quoteId}`, { taxRate: 11.1111 });
      expect(fits.status).toBe(200);
      expect((await read()).body).toMatchObject({ subtotal: 9e12, taxAmount: 999_999_000_000, total: 9_999_999_000_000 });
    });
  });
});
