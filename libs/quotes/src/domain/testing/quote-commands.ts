import { quoteDecider, type QuoteCommand, type QuoteState } from '../quote.decider';
import type { QuoteEvent, QuoteLineInput } from '../quote.events';

/** The events the decider produces for a sequence of commands: exactly what the product would store. */
export function decidedEvents(commands: QuoteCommand[]): QuoteEvent[] {
  let state: QuoteState = quoteDecider.initialState();
  const events: QuoteEvent[] = [];
  for (const command of commands) {
    const produced = quoteDecider.decide(command, state);
    state = produced.reduce(quoteDecider.evolve, state);
    events.push(...produced);
  }
  return events;
}

/** A draft quote for Ada (EUR, 21 % tax, valid 30 days, Q-2026-000001 of sub_1). */
export function createQuote(quoteId: string, organizationId: string, lineItems: QuoteLineInput[], at: number): QuoteCommand {
  return {
    type: 'createQuote',
    quoteId,
    quoteNumber: 'Q-2026-000001',
    organizationId,
    submissionId: 'sub_1',
    customer: { name: 'Ada', email: 'ada@example.com' },
    locale: 'en',
    terms: { currency: 'EUR', taxRate: 21, validityDays: 30, reference: null, notes: null },
    lineItems,
    pricingSource: 'base',
    at,
  };
}
