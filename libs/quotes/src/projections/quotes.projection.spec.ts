import { applyEvent } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import { DAY_MS, quoteStream, type QuoteEvent, type QuoteLineInput } from '../domain/quote.events';
import { createQuote, decidedEvents } from '../domain/testing/quote-commands';
import { QUOTE_LINKS, QUOTE_VERSIONS, QUOTES, quotesProjection, toQuoteListItem, versionEntryId, type QuoteDocument, type QuoteLinkDocument, type QuoteVersionDocument } from './quotes.projection';

const ORG = 'org_1';
const QUOTE = 'quo_1';
const T0 = Date.UTC(2026, 0, 1);
const LINK = { tokenHash: 'hash-1', customerUrl: 'http://localhost:3000/q/token-1' };

const line = (description: string, unitPrice: number): QuoteLineInput => ({ description, quantity: 1, unitPrice, itemType: 'window', itemKey: null, externalRef: null });

const lifecycle = (): QuoteEvent[] =>
  decidedEvents([
    createQuote(QUOTE, ORG, [line('Window', 100)], T0),
    { type: 'changeQuote', organizationId: ORG, terms: { notes: 'Draft notes' }, revise: false, ifMatch: null, at: T0 + 1 },
    { type: 'replaceLineItems', organizationId: ORG, lineItems: [line('Window', 200)], revise: false, changeDescription: 'Bigger window', ifMatch: null, at: T0 + 2 },
    { type: 'sendQuote', organizationId: ORG, recipients: ['ada@example.com'], locale: null, newLink: LINK, ifMatch: null, at: T0 + 3 },
    { type: 'viewQuote', tokenHash: LINK.tokenHash, at: T0 + 4 },
    { type: 'changeQuote', organizationId: ORG, terms: { taxRate: 9 }, externalRef: 'crm:q:1', revise: true, ifMatch: null, at: T0 + 5 },
    { type: 'sendQuote', organizationId: ORG, recipients: ['ada@example.com'], locale: null, newLink: LINK, ifMatch: null, at: T0 + 6 },
    { type: 'noticeExpiringSoon', at: T0 + 6 + 28 * DAY_MS },
    { type: 'acceptQuote', tokenHash: LINK.tokenHash, name: 'Ada', at: T0 + 7 + 28 * DAY_MS },
  ]);

let position = 0;
function recorded(event: QuoteEvent): RecordedEvent {
  position += 1;
  return { id: `ev-${position}`, streamId: quoteStream(QUOTE), type: event.type, data: event.data, metadata: {}, revision: position - 1, position, recordedAt: T0 };
}

describe('quotes projection', () => {
  let store: SqliteReadStore;
  let history: RecordedEvent[];

  beforeEach(() => {
    store = new SqliteReadStore({ file: ':memory:' });
    position = 0;
    history = lifecycle().map(recorded);
  });
  afterEach(() => store.close());

  const quote = () => store.get<QuoteDocument>(QUOTES, QUOTE);
  const versions = async () => (await store.find<QuoteVersionDocument>(QUOTE_VERSIONS, { filter: { quoteId: QUOTE }, sort: [{ field: 'seq', direction: 'desc' }], limit: 50 })).items;
  const everything = async () => ({ quote: await quote(), versions: await versions(), link: await store.get(QUOTE_LINKS, LINK.tokenHash) });

  it('given the life of a quote, then the document is the api-v1 quote', async () => {
    for (const event of history) await applyEvent(store, quotesProjection, event);
    expect(await quote()).toMatchObject({
      id: QUOTE,
      organizationId: ORG,
      quoteNumber: 'Q-2026-000001',
      version: 2,
      status: 'accepted',
      notes: 'Draft notes',
      taxRate: 9,
      externalRef: 'crm:q:1',
      lineItems: [{ description: 'Window', unitPrice: 200, total: 200, order: 0 }],
      subtotal: 200,
      taxAmount: 18,
      total: 218,
      sentAt: T0 + 6,
      // version 2 was sent after version 1 was viewed, and accepted without a view being recorded
      viewedAt: null,
      validUntil: T0 + 6 + 30 * DAY_MS,
      createdAt: T0,
      // the expiring-soon notice is bookkeeping: updatedAt is the acceptance
      updatedAt: T0 + 7 + 28 * DAY_MS,
      tokenHash: LINK.tokenHash,
      expiringSoonNoticedFor: T0 + 6 + 30 * DAY_MS,
    });
  });

  it('given each event of the life of a quote, then the list item of GET /quotes follows the quote', async () => {
    for (const event of history) {
      await applyEvent(store, quotesProjection, event);
      const current = (await quote())!;
      expect(current.listItem).toEqual(toQuoteListItem(current));
    }
    expect((await quote())!.listItem).toMatchObject({ status: 'accepted', version: 2, taxRate: 9, externalRef: 'crm:q:1' });
  });

  it('given a line-item replacement and a revision, then the history keeps every earlier state and the sent version exactly as sent', async () => {
    for (const event of history) await applyEvent(store, quotesProjection, event);
    const entries = await versions();
    expect(entries.map((e) => [e.seq, e.version, e.changeDescription, e.createdAt])).toEqual([
      [2, 2, 'Terms changed: taxRate', T0 + 5],
      [1, 1, 'Bigger window', T0 + 2],
      [0, 1, null, T0],
    ]);
    // version 1 as the customer saw it: sent, viewed, with the tax and breakdown of then
    expect(entries[1].snapshot).toMatchObject({ version: 1, status: 'viewed', taxRate: 21, total: 242, sentAt: T0 + 3, viewedAt: T0 + 4, lineItems: [{ unitPrice: 200 }] });
    // the original breakdown, replaced while still a draft (the notes were changed in that draft before)
    expect(entries[2].snapshot).toMatchObject({ version: 1, status: 'draft', notes: 'Draft notes', lineItems: [{ unitPrice: 100 }], total: 121 });
    // the current version, as it stands now
    expect(entries[0].snapshot).toMatchObject({ version: 2, status: 'accepted', taxRate: 9, total: 218, externalRef: 'crm:q:1' });
    expect(entries[0].id).toBe(versionEntryId(QUOTE, 2));
  });

  it('given sends, a view, a revision and an acceptance, then the customer link shows the last sent version with the live status', async () => {
    const upTo = async (count: number) => {
      for (const event of history.slice(0, count)) await applyEvent(store, quotesProjection, event);
      return store.get<QuoteLinkDocument>(QUOTE_LINKS, LINK.tokenHash);
    };
    expect(await upTo(3)).toBeNull();
    expect(await upTo(5)).toMatchObject({ quoteId: QUOTE, organizationId: ORG, status: 'viewed', viewedAt: T0 + 4, offer: { version: 1, taxRate: 21, total: 242 } });
    // revised: the customer still sees version 1, but cannot act on it
    expect(await upTo(6)).toMatchObject({ status: 'draft', offer: { version: 1, taxRate: 21 } });
    expect(await upTo(history.length)).toMatchObject({ status: 'accepted', sentAt: T0 + 6, respondedAt: T0 + 7 + 28 * DAY_MS, offer: { version: 2, taxRate: 9, total: 218 } });
  });

  it('given a viewed quote revised and sent again, then neither the quote nor its link shows a view until the new version is viewed', async () => {
    const events = decidedEvents([
      createQuote(QUOTE, ORG, [line('Window', 100)], T0),
      { type: 'sendQuote', organizationId: ORG, recipients: ['ada@example.com'], locale: null, newLink: LINK, ifMatch: null, at: T0 + 3 },
      { type: 'viewQuote', tokenHash: LINK.tokenHash, at: T0 + 4 },
      { type: 'changeQuote', organizationId: ORG, terms: { taxRate: 9 }, revise: true, ifMatch: null, at: T0 + 5 },
      { type: 'sendQuote', organizationId: ORG, recipients: ['ada@example.com'], locale: null, newLink: LINK, ifMatch: null, at: T0 + 6 },
      { type: 'viewQuote', tokenHash: LINK.tokenHash, at: T0 + 8 },
    ]).map(recorded);
    const viewed = events.pop()!;
    for (const event of events) await applyEvent(store, quotesProjection, event);
    expect(await quote()).toMatchObject({ status: 'sent', version: 2, sentAt: T0 + 6, viewedAt: null });
    expect((await quote())!.listItem).toMatchObject({ status: 'sent', viewedAt: null });
    expect(await store.get(QUOTE_LINKS, LINK.tokenHash)).toMatchObject({ status: 'sent', viewedAt: null, offer: { version: 2 } });
    await applyEvent(store, quotesProjection, viewed);
    expect(await quote()).toMatchObject({ status: 'viewed', viewedAt: T0 + 8 });
    expect(await store.get(QUOTE_LINKS, LINK.tokenHash)).toMatchObject({ status: 'viewed', viewedAt: T0 + 8 });
  });

  it('given every event delivered twice, then the read models are the same as with each once', async () => {
    for (const event of history) await applyEvent(store, quotesProjection, event);
    const once = await everything();
    const other = new SqliteReadStore({ file: ':memory:' });
    try {
      for (const event of history) {
        await applyEvent(other, quotesProjection, event);
        expect(await applyEvent(other, quotesProjection, event)).toBe(0);
      }
      expect({ quote: await other.get(QUOTES, QUOTE), versions: (await other.find(QUOTE_VERSIONS, { filter: { quoteId: QUOTE }, sort: [{ field: 'seq', direction: 'desc' }], limit: 50 })).items, link: await other.get(QUOTE_LINKS, LINK.tokenHash) }).toEqual(once);
    } finally {
      await other.close();
    }
  });

  it('given the whole history replayed after the fact, then nothing changes', async () => {
    for (const event of history) await applyEvent(store, quotesProjection, event);
    const before = await everything();
    for (const event of history) expect(await applyEvent(store, quotesProjection, event)).toBe(0);
    expect(await everything()).toEqual(before);
  });
});
