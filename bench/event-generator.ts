import type { EventStore } from '@lib/event-store';
import { quoteDecider, quoteNumberOf, quoteStream, type QuoteCommand, type QuoteEvent, type QuoteLineInput, type QuoteState } from '@lib/quotes';

const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 5);
/** How many organizations the generated quotes belong to: `org_gen0` … `org_gen49`. */
export const GENERATED_ORGANIZATIONS = 50;
export const generatedOrganizationId = (n: number) => `org_gen${n}`;

const LINES: QuoteLineInput[] = [
  { description: 'Tilt-turn window 1200 × 1400', quantity: 2, unitPrice: 612.4, itemType: 'window', itemKey: 'product:tpl_bench:0', externalRef: null },
  { description: 'Triple glazing', quantity: 2, unitPrice: 75.6, itemType: 'material', itemKey: 'option:c1:hr3', externalRef: null },
  { description: 'Insect screen', quantity: 1, unitPrice: 35, itemType: 'material', itemKey: 'option:product:screen', externalRef: null },
  { description: 'Installation', quantity: 1, unitPrice: 96.5, itemType: 'labor', itemKey: null, externalRef: null },
];

/** Runs a command through the quote decider: the events are exactly what the product would store. */
function step(state: QuoteState, command: QuoteCommand, out: QuoteEvent[]): QuoteState {
  const events = quoteDecider.decide(command, state);
  out.push(...events);
  return events.reduce(quoteDecider.evolve, state);
}

/**
 * The events of one quote's life, produced by the real decider: created, its breakdown replaced
 * `revisions` times (a revision of the sent version each time after the first send), sent,
 * viewed and accepted.
 */
export function quoteLife(index: number, organizationId: string, revisions: number): { quoteId: string; events: QuoteEvent[] } {
  const quoteId = `quo_gen${String(index).padStart(8, '0')}`;
  const events: QuoteEvent[] = [];
  let at = START + index * 1_000;
  const tokenHash = `sha256:gen${index}`;
  const link = { tokenHash, customerUrl: `http://localhost:3000/q/gen${index}` };
  let state = step(
    null,
    {
      type: 'createQuote',
      quoteNumber: quoteNumberOf(2026, index + 1),
      quoteId,
      organizationId,
      submissionId: `sub_gen${index}`,
      customer: { name: `Customer ${index}`, email: `customer${index}@example.com` },
      locale: 'en',
      terms: { currency: 'EUR', taxRate: 21, validityDays: 30, reference: `Ref ${index}`, notes: null },
      lineItems: LINES,
      pricingSource: 'base',
      at,
    },
    events,
  );
  for (let r = 0; r < revisions; r++) {
    at += 60_000;
    const lineItems = LINES.map((line, i) => (i === 0 ? { ...line, quantity: line.quantity + r + 1 } : line));
    const sent = state?.status === 'sent' || state?.status === 'viewed';
    state = step(state, { type: 'replaceLineItems', organizationId, lineItems, revise: sent, changeDescription: `Revision ${r + 1}`, ifMatch: null, at }, events);
    at += 60_000;
    state = step(state, { type: 'sendQuote', organizationId, recipients: [`customer${index}@example.com`], locale: null, newLink: link, ifMatch: null, at }, events);
  }
  if (revisions === 0) {
    at += 60_000;
    state = step(state, { type: 'sendQuote', organizationId, recipients: [`customer${index}@example.com`], locale: null, newLink: link, ifMatch: null, at }, events);
  }
  state = step(state, { type: 'viewQuote', tokenHash, at: at + DAY }, events);
  step(state, { type: 'acceptQuote', tokenHash, name: `Customer ${index}`, at: at + 2 * DAY }, events);
  return { quoteId, events };
}

/**
 * Writes at least `total` events through the event store port: quote streams of 50
 * organizations, each quote 7 events (created, breakdown replaced, sent, breakdown revised, sent,
 * viewed, accepted), one append per stream with many appends in flight (the store commits them
 * in groups). Returns how many events were written.
 */
export async function generateQuoteEvents(store: EventStore, total: number, options: { inFlight?: number; onProgress?: (written: number) => void } = {}): Promise<number> {
  let written = 0;
  let next = 0;
  const worker = async () => {
    while (written < total) {
      const index = next++;
      const { quoteId, events } = quoteLife(index, generatedOrganizationId(index % GENERATED_ORGANIZATIONS), 2);
      written += events.length;
      await store.appendToStream(
        quoteStream(quoteId),
        events.map((event) => ({ ...event, metadata: { actor: index % 3 === 0 ? 'admin' : `apiKey:key_gen${index % 50}` } })),
        'no_stream',
      );
      if (index % 5_000 === 0) options.onProgress?.(written);
    }
  };
  await Promise.all(Array.from({ length: options.inFlight ?? 64 }, worker));
  return written;
}
