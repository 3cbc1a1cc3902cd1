import { ActiveProjectionReadStore, AggregateRepository, rebuildProjections, ReadYourWrites, upcast, withoutBookkeeping } from '@lib/event-sourcing';
import { SqliteEventStore, type EventData } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import { auditQuote } from '../application/quote-audit';
import { QUOTE_VERSIONS, QUOTES, quotesProjection } from '../projections/quotes.projection';
import { quoteDecider } from './quote.decider';
import { quoteStream, type QuoteEvent, type QuoteLineInput, type QuoteLineItemsReplacedV1 } from './quote.events';
import { createQuote, decidedEvents } from './testing/quote-commands';

const ORG = 'org_1';
const QUOTE = 'quo_1';
const T0 = Date.UTC(2026, 0, 1);
const line = (description: string, unitPrice: number): QuoteLineInput => ({ description, quantity: 2, unitPrice, itemType: 'window', itemKey: null, externalRef: null });

/** A quote whose breakdown was replaced twice, as the decider decides it today (v2 events). */
const decided = (): QuoteEvent[] =>
  decidedEvents([
    createQuote(QUOTE, ORG, [line('Window', 100)], T0),
    { type: 'replaceLineItems', organizationId: ORG, lineItems: [line('Window', 120)], revise: false, changeDescription: 'Price update', ifMatch: null, at: T0 + 1_000 },
    { type: 'replaceLineItems', organizationId: ORG, lineItems: [line('Door', 900)], revise: false, changeDescription: null, ifMatch: null, at: T0 + 2_000 },
  ]);

/** The same history as stored before v2 existed: line-item replacements in the v1 shape. */
function asStoredBeforeV2(events: QuoteEvent[]): EventData[] {
  return events.map((event) => {
    if (event.type !== 'quote.v2.lineItemsReplaced') return event;
    const { previousTotals: _notInV1, ...data } = event.data;
    return { type: 'quote.v1.lineItemsReplaced', data } satisfies QuoteLineItemsReplacedV1;
  });
}

describe('quote.v1.lineItemsReplaced → quote.v2.lineItemsReplaced', () => {
  it('the decider emits v2, carrying the totals it replaced', () => {
    const [created, first, second] = decided();
    expect(first).toMatchObject({ type: 'quote.v2.lineItemsReplaced', data: { previousTotals: created.type === 'quote.v1.created' ? created.data.totals : null } });
    expect(second).toMatchObject({ type: 'quote.v2.lineItemsReplaced', data: { previousTotals: { subtotal: 240, taxAmount: 50.4, total: 290.4 } } });
  });

  it('a stored v1 event reads as v2 with previousTotals null and everything else as it was', () => {
    const stored = asStoredBeforeV2(decided())[1] as QuoteLineItemsReplacedV1;
    const recorded = { id: 'e1', streamId: quoteStream(QUOTE), revision: 1, position: 2, recordedAt: T0, metadata: { actor: 'admin' }, ...stored };
    expect(upcast(recorded)).toEqual({ ...recorded, type: 'quote.v2.lineItemsReplaced', data: { ...stored.data, previousTotals: null } });
  });

  it('an aggregate, a rebuild and an audit over stored v1 events give the same quote as over v2 events', async () => {
    const results = [];
    for (const events of [decided(), asStoredBeforeV2(decided())]) {
      const eventStore = new SqliteEventStore({ file: ':memory:' });
      const reads = new ActiveProjectionReadStore(new SqliteReadStore({ file: ':memory:' }));
      await eventStore.appendToStream(quoteStream(QUOTE), events.map((event) => ({ ...event, metadata: { actor: 'admin' } })), 'no_stream');
      const stored = await eventStore.readStream(quoteStream(QUOTE));
      const repository = new AggregateRepository(eventStore, new ReadYourWrites());
      const aggregate = await repository.load(quoteDecider, quoteStream(QUOTE));
      await rebuildProjections({ events: eventStore, store: reads, projections: [quotesProjection], switchGraceMs: 0 });
      // Read as the API reads: the pointer leads to the rebuilt generation.
      const quote = await reads.get(QUOTES, QUOTE);
      const versions = await reads.find(QUOTE_VERSIONS, { filter: { quoteId: QUOTE }, sort: [{ field: 'seq', direction: 'desc' }, { field: 'id', direction: 'desc' }], limit: 10 });
      const audit = await auditQuote(eventStore, reads, QUOTE);
      expect(await reads.engine.listCollections()).toContain('quotes_v3_g1');
      results.push({ types: stored.map((e) => e.type), aggregate, quote: quote && withoutBookkeeping(quote), versions: versions.items.map(withoutBookkeeping), audit });
      await reads.close();
      await eventStore.close();
    }
    const [fromV2, fromV1] = results;
    expect(fromV1.types).toContain('quote.v1.lineItemsReplaced');
    expect(fromV2.types).not.toContain('quote.v1.lineItemsReplaced');
    expect(fromV1.aggregate).toEqual(fromV2.aggregate);
    expect(fromV1.quote).toEqual(fromV2.quote);
    expect(fromV1.versions).toEqual(fromV2.versions);
    expect(fromV2.versions).toHaveLength(3);
    expect(fromV1.audit?.mismatches).toEqual([]);
    expect(fromV1.audit?.steps.map((s) => [s.type, s.trigger])).toEqual([
      ['quote.v1.created', 'create'],
      ['quote.v1.lineItemsReplaced', 'line-item replace'],
      ['quote.v1.lineItemsReplaced', 'line-item replace'],
    ]);
  });
});
