import type { QuoteDraft } from './quote.decider';

/**
 * A quote number was taken. This append is the commit point of quote creation (see
 * docs/decisions/quote-numbers.md): it carries everything needed to create the quote, so a
 * reservation whose quote stream is missing can always be completed.
 */
export type QuoteNumberReserved = {
  type: 'quoteNumber.v1.reserved';
  data: { organizationId: string; year: number; sequence: number; quoteNumber: string; quoteId: string; draft: QuoteDraft; at: number };
};

/** One counter stream per organization and calendar year (UTC). */
export const QUOTE_NUMBER_STREAM = 'quotenumbers-';
export const quoteNumberStream = (organizationId: string, year: number) => `${QUOTE_NUMBER_STREAM}${organizationId}-${year}`;
