import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore, type EventData, type RecordedEvent } from '@lib/event-store';
import { quoteLinkUrl } from '@lib/quotes/application/quote-links';
import { loadConfig } from '@lib/shared';
import { LeadWebhookSource } from './lead.source';
import { QuoteLinkFinalizer } from './quote-link.finalizer';
import { QuoteWebhookSource } from './quote.source';
import { SubmissionWebhookSource } from './submission.source';

const subject = (status: string) => ({
  quote: { id: 'quo_1', quoteNumber: 'Q-2026-000001', version: 2, status, total: 121, currency: 'EUR' },
  customer: { name: 'Ada', email: 'ada@example.com' },
  submission: { id: 'sub_1' },
});
const base = { organizationId: 'org_1', quoteId: 'quo_1', at: 1_000 };

describe('webhook sources', () => {
  let events: SqliteEventStore;
  let quoteEvents: RecordedEvent[];

  beforeAll(async () => {
    events = new SqliteEventStore({ file: ':memory:' });
    const history: EventData[] = [
      { type: 'quote.v1.created', data: { ...base, ...subject('draft'), quoteNumber: 'Q-2026-000001', submissionId: 'sub_1', locale: 'de', lineItems: [], terms: {}, totals: {}, pricingSource: 'base', validUntil: 9 } },
      { type: 'quote.v1.sent', data: { ...base, ...subject('sent'), recipients: ['ada@example.com'], locale: 'nl', sentAt: 2, validUntil: 9, customerUrl: 'http://localhost:3000/q/tok', tokenHash: 'h', resend: false } },
      { type: 'quote.v1.viewed', data: { ...base, ...subject('viewed') } },
      { type: 'quote.v1.rejected', data: { ...base, ...subject('rejected'), name: 'Ada', reason: 'Too expensive' } },
      { type: 'quote.v1.expiringSoonNoticed', data: { ...base, ...subject('viewed'), validUntil: 9 } },
      { type: 'quote.v1.expired', data: { ...base, ...subject('expired'), validUntil: 9 } },
      { type: 'quote.v1.externalRefChanged', data: { ...base, externalRef: 'crm:1' } },
    ];
    await events.appendToStream('quote-quo_1', history, 'no_stream');
    quoteEvents = await events.readStream('quote-quo_1');
  });
  afterAll(() => events.close());

  describe('quotes', () => {
    const config = loadConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'sources-')), PUBLIC_BASE_URL: 'http://localhost:3000' });
    const source = () => new QuoteWebhookSource(events);
    const links = () => new QuoteLinkFinalizer(events, config);

    it.each([
      [0, 'quote.created', 'de'],
      [1, 'quote.sent', 'nl'],
      [2, 'quote.viewed', 'nl'],
      [3, 'quote.rejected', 'nl'],
      [4, 'quote.expiring_soon', 'nl'],
      [5, 'quote.expired', 'nl'],
    ])('event %i becomes %s with the customer locale of that moment (%s)', async (index, type, locale) => {
      const [draft] = await source().toWebhookEvents(quoteEvents[index]);
      expect(draft).toMatchObject({ type, organizationId: 'org_1', entityType: 'quote', entityId: 'quo_1', customerLocale: locale, fastPath: false });
      expect(draft.data).toMatchObject({ quote: { id: 'quo_1', quoteNumber: 'Q-2026-000001', version: 2, total: 121, currency: 'EUR' }, customer: { name: 'Ada', email: 'ada@example.com' }, submission: { id: 'sub_1' } });
    });

    it('adds the line items to quote.created and the reason to quote.rejected', async () => {
      const [created] = await source().toWebhookEvents(quoteEvents[0]);
      expect(created.data.lineItems).toEqual([]);
      const [rejected] = await source().toWebhookEvents(quoteEvents[3]);
      expect(rejected.data).toMatchObject({ quote: { status: 'rejected' }, rejection: { name: 'Ada', reason: 'Too expensive' } });
    });

    it('keeps the customer link (a capability) out of the quote.sent draft, whether the event kept it or not', async () => {
      const stored = quoteEvents[1];
      const derived = { ...stored, data: { ...(stored.data as Record<string, unknown>), customerUrl: null } } as RecordedEvent;
      for (const event of [stored, derived]) {
        const [sent] = await source().toWebhookEvents(event);
        expect(sent.data.quote).toEqual(subject('sent').quote);
        expect(JSON.stringify(sent)).not.toContain('/q/');
      }
    });

    describe('the customer link, added to each attempt of quote.sent', () => {
      const envelope = (quote: Record<string, unknown>) => ({ event: 'quote.sent', data: { ...subject('sent'), quote } });
      const attempt = (quoteId: string) => ({ id: 'evt_1', organizationId: 'org_1', generation: 1, payload: envelope({ ...subject('sent').quote, id: quoteId }) });

      it('given a quote sent with a link its event kept (before links were derived), then that link', async () => {
        const finalized = await links().finalize(attempt('quo_1'));
        expect(finalized).toEqual(envelope({ ...subject('sent').quote, customerUrl: 'http://localhost:3000/q/tok' }));
      });

      it('given a quote whose link is derived from its id, then the derived link', async () => {
        await events.appendToStream('quote-quo_2', [{ type: 'quote.v1.sent', data: { ...base, quoteId: 'quo_2', ...subject('sent'), recipients: [], locale: 'en', sentAt: 2, validUntil: 9, customerUrl: null, tokenHash: 'h2', resend: false } }], 'no_stream');
        const { data } = (await links().finalize(attempt('quo_2'))) as { data: { quote: { customerUrl: string } } };
        expect(data.quote.customerUrl).toBe(quoteLinkUrl(config, 'quo_2'));
        expect(data.quote.customerUrl).toMatch(/^http:\/\/localhost:3000\/q\/[0-9A-Za-z]{43}$/);
      });

      it('given a quote first sent after a long draft history, then the link of that send (the stream is read a page at a time)', async () => {
        const edits = Array.from({ length: 45 }, (_, n) => ({ type: 'quote.v1.externalRefChanged', data: { ...base, quoteId: 'quo_3', externalRef: `crm:${n}` } }));
        const send = { type: 'quote.v1.sent', data: { ...base, quoteId: 'quo_3', ...subject('sent'), recipients: [], locale: 'en', sentAt: 2, validUntil: 9, customerUrl: 'http://localhost:3000/q/tok3', tokenHash: 'h3', resend: false } };
        await events.appendToStream('quote-quo_3', [...edits, send], 'no_stream');
        const { data } = (await links().finalize(attempt('quo_3'))) as { data: { quote: { customerUrl: string } } };
        expect(data.quote.customerUrl).toBe('http://localhost:3000/q/tok3');
      });

      it('given a quote that was never sent, then no link: the attempt fails', async () => {
        await expect(links().finalize(attempt('quo_unknown'))).rejects.toThrow('no send');
      });

      it('redacts a link that reached a stored payload, and leaves other payloads alone', () => {
        expect(links().redact(envelope({ ...subject('sent').quote, customerUrl: 'http://localhost:3000/q/tok' }))).toEqual(envelope(subject('sent').quote));
        const without = envelope(subject('sent').quote);
        expect(links().redact(without)).toBe(without);
      });
    });

    it('ignores quote events that are not webhooks', async () => {
      expect(await source().toWebhookEvents(quoteEvents[6])).toEqual([]);
    });

    it('is deterministic: the same event gives the same draft after later events', async () => {
      expect(await source().toWebhookEvents(quoteEvents[2])).toEqual(await source().toWebhookEvents(quoteEvents[2]));
    });
  });

  describe('submissions', () => {
    const created = (externalPricing: unknown) =>
      ({
        id: 'e1', streamId: 'submission-sub_1', type: 'submission.v1.created', revision: 0, position: 1, recordedAt: 5, metadata: {},
        data: {
          organizationId: 'org_1', submissionId: 'sub_1', sessionId: 'ses_1', templateId: 'tpl_1', templateName: 'Tilt-turn', templateSlug: 'tilt-turn',
          customer: { name: 'Ada', email: 'ada@example.com', phone: null, companyName: 'AE Ltd', address: 'x', postalCode: null, city: null, country: null },
          configuration: { width: 1200, height: 1400, unitAmount: 1, components: [{}, {}, {}], options: [], insideColorId: null, outsideColorId: null, notes: '', section: null },
          configHash: 'sha256:1', resolvedConfiguration: {}, basePricing: { lineItems: [{ description: 'Frame' }], subtotal: 500 },
          externalPricing, locale: 'en', origin: 'storefront', at: 4,
        },
      }) as unknown as RecordedEvent;

    it('given base pricing only, then source base with its subtotal and no line items', async () => {
      const [draft] = await new SubmissionWebhookSource().toWebhookEvents(created(null));
      expect(draft.data).toEqual({
        submission: { id: 'sub_1', createdAt: 4 },
        customer: { name: 'Ada', email: 'ada@example.com', phone: null, companyName: 'AE Ltd' },
        template: { id: 'tpl_1', name: 'Tilt-turn', slug: 'tilt-turn' },
        configuration: { width: 1200, height: 1400, componentCount: 3 },
        pricing: { source: 'base', subtotal: 500 },
      });
      expect(draft).toMatchObject({ type: 'submission.created', entityType: 'submission', entityId: 'sub_1', customerLocale: 'en' });
    });

    it('given frozen external pricing, then source external with the external items', async () => {
      const external = { configHash: 'sha256:1', lineItems: [{ description: 'Partner price', quantity: 1, unitPrice: 450, total: 450, itemType: 'window' }], subtotal: 450, receivedAt: 3 };
      const [draft] = await new SubmissionWebhookSource().toWebhookEvents(created(external));
      expect(draft.data.pricing).toEqual({ source: 'external', configHash: 'sha256:1', lineItems: external.lineItems, subtotal: 450 });
    });
  });

  it('leads: lead.created with the enquiry', async () => {
    const event = {
      id: 'e1', streamId: 'lead-lead_1', type: 'lead.v1.created', revision: 0, position: 1, recordedAt: 5, metadata: {},
      data: { organizationId: 'org_1', leadId: 'lead_1', name: 'Jane', email: 'jane@example.com', phone: null, message: 'Hi', createdAt: 5 },
    } as unknown as RecordedEvent;
    const [draft] = await new LeadWebhookSource().toWebhookEvents(event);
    expect(draft).toEqual({
      type: 'lead.created', organizationId: 'org_1', entityType: 'lead', entityId: 'lead_1', customerLocale: null, fastPath: false,
      data: { lead: { id: 'lead_1', name: 'Jane', email: 'jane@example.com', phone: null, message: 'Hi', createdAt: 5 } },
    });
  });
});
