import { isDeepStrictEqual } from 'node:util';
import type { Decider } from '@lib/event-sourcing';
import { checkedAmount, computeTotals, lineTotal, PreconditionFailed, REQUEST_RETRY_WINDOW_MS } from '@lib/shared';
import { QuoteNotActionable, QuoteNotEditable, QuoteNotFound, QuoteNotSendable, QuoteVersionNotCurrent, RevisionRequired } from './quote.errors';
import {
  DAY_MS,
  EXPIRING_SOON_MS,
  movesUpdatedAt,
  TERM_FIELDS,
  type PricingSource,
  type QuoteCustomer,
  type QuoteEvent,
  type QuoteEventSubject,
  type QuoteLineInput,
  type QuoteLineItem,
  type QuoteLink,
  type QuoteStatus,
  type QuoteTerms,
  type QuoteTotals,
} from './quote.events';

/** The aggregate as the decider sees it; null until the quote is created. */
export interface Quote {
  quoteId: string;
  organizationId: string;
  submissionId: string;
  quoteNumber: string;
  customer: QuoteCustomer;
  locale: string;
  version: number;
  status: QuoteStatus;
  terms: QuoteTerms;
  lineItems: QuoteLineItem[];
  totals: QuoteTotals;
  externalRef: string | null;
  createdAt: number;
  updatedAt: number;
  sentAt: number | null;
  validUntil: number;
  link: QuoteLink | null;
  /** the validUntil an expiring-soon notice was recorded for; a new validity window gets its own */
  expiringSoonNoticedFor: number | null;
  /** the keyed request of the last send, if it had a key (its retry sends nothing more) */
  lastSendRequest?: string;
  /** the customer's keyed request that accepted or rejected the quote, and when (its retry answers as the first did) */
  answer?: { request: string; at: number };
}

export type QuoteState = Quote | null;

/** Everything a new quote is made of except its number: what a number reservation carries. */
export interface QuoteDraft {
  quoteId: string;
  organizationId: string;
  submissionId: string;
  customer: QuoteCustomer;
  locale: string;
  terms: QuoteTerms;
  lineItems: QuoteLineInput[];
  pricingSource: PricingSource;
  at: number;
}

/** `If-Match` entity tags as sent (`"3-1767225600000"` or `*`); null when the header is absent. */
export type IfMatch = string[] | null;

export type QuoteCommand =
  | ({ type: 'createQuote'; quoteNumber: string } & QuoteDraft)
  | { type: 'changeQuote'; organizationId: string; terms: Partial<QuoteTerms>; externalRef?: string | null; revise: boolean; ifMatch: IfMatch; at: number }
  | { type: 'replaceLineItems'; organizationId: string; lineItems: QuoteLineInput[]; revise: boolean; changeDescription: string | null; ifMatch: IfMatch; at: number }
  | {
      type: 'sendQuote';
      organizationId: string;
      recipients: string[];
      /** null: the customer's locale from the submission */
      locale: string | null;
      /** used on the first send only; later sends keep the customer's link */
      newLink: QuoteLink;
      ifMatch: IfMatch;
      /** the keyed request's id (idempotentId), the same on its retries */
      request?: string;
      at: number;
    }
  | { type: 'viewQuote'; tokenHash: string; at: number }
  // `version`: the version the customer saw and answers; without it, the current one (the documented body).
  | { type: 'acceptQuote'; tokenHash: string; name: string | null; version?: number; at: number; request?: string }
  | { type: 'rejectQuote'; tokenHash: string; name: string | null; reason: string | null; version?: number; at: number; request?: string }
  | { type: 'noticeExpiringSoon'; at: number }
  | { type: 'expireQuote'; at: number };

/** The ETag of a quote version (decisions §3): its `version` and `updatedAt`. */
export function quoteETag(quote: Pick<Quote, 'version' | 'updatedAt'>): string {
  return `"${quote.version}-${quote.updatedAt}"`;
}

/** decisions §7: validUntil = (sentAt or createdAt) + validityDays. */
export function validUntilOf(from: number, validityDays: number): number {
  return from + validityDays * DAY_MS;
}

export function quoteNumberOf(year: number, sequence: number): string {
  return `Q-${year}-${String(sequence).padStart(6, '0')}`;
}

/**
 * Prices each line (decimal, rounded half-up to the currency's minor unit) and numbers them in
 * order. A total beyond the largest amount of the currency is refused at `path` (AmountTooLarge).
 */
export function priceLineItems(lines: readonly QuoteLineInput[], currency: string, path = 'lineItems'): QuoteLineItem[] {
  return lines.map((line, order) => ({
    description: line.description,
    quantity: line.quantity,
    unitPrice: line.unitPrice,
    total: checkedAmount(lineTotal(line.quantity, line.unitPrice, currency), currency, path),
    itemType: line.itemType,
    itemKey: line.itemKey,
    externalRef: line.externalRef,
    order,
  }));
}

const initialState = (): QuoteState => null;

function owned(state: QuoteState, organizationId: string): Quote {
  if (!state || state.organizationId !== organizationId) throw new QuoteNotFound();
  return state;
}

function linked(state: QuoteState, tokenHash: string): Quote {
  if (!state || state.link?.tokenHash !== tokenHash) throw new QuoteNotFound();
  return state;
}

function checkIfMatch(quote: Quote, ifMatch: IfMatch): void {
  if (ifMatch === null || ifMatch.includes('*')) return;
  const current = quoteETag(quote);
  if (!ifMatch.includes(current)) throw new PreconditionFailed(current);
}

/** api-v1 States: how a term or line-item change may apply in the quote's status. */
function changeMode(quote: Quote, revise: boolean): 'direct' | 'revision' {
  switch (quote.status) {
    case 'draft':
      return 'direct';
    case 'sent':
    case 'viewed':
      if (!revise) throw new RevisionRequired(quote.status, quote.version);
      return 'revision';
    default:
      throw new QuoteNotEditable(quote.status);
  }
}

function subject(quote: Quote, status: QuoteStatus): QuoteEventSubject {
  return {
    quote: { id: quote.quoteId, quoteNumber: quote.quoteNumber, version: quote.version, status, total: quote.totals.total, currency: quote.terms.currency },
    customer: quote.customer,
    submission: { id: quote.submissionId },
  };
}

/**
 * The time of a change the client can see. It is later than the previous change even when the
 * clock says otherwise (two writes in one millisecond), so the ETag of each state is different.
 */
const changedAt = (quote: Quote, at: number) => Math.max(at, quote.updatedAt + 1);

const isOpen = (quote: Quote) => quote.status === 'sent' || quote.status === 'viewed';

/**
 * The term a refused price is blamed on (AmountTooLarge): a currency with more decimals has a
 * smaller largest amount, and tax adds to the total; with neither changed, the line items.
 */
function refusalField(changes: Partial<QuoteTerms>): string {
  if (changes.currency !== undefined) return 'currency';
  if (changes.taxRate !== undefined) return 'taxRate';
  return 'lineItems';
}

function decide(command: QuoteCommand, state: QuoteState): QuoteEvent[] {
  switch (command.type) {
    case 'createQuote': {
      // Completing a number reservation twice (its creator and a recovery) creates the quote once.
      if (state) return [];
      const { quoteId, organizationId, quoteNumber, submissionId, terms, at } = command;
      const lineItems = priceLineItems(command.lineItems, terms.currency);
      // Line items of the submission were priced within bounds; what takes their total past the
      // largest amount is then the tax, which the request may not have named: the refusal names the
      // request as a whole, not `lineItems` it did not send (found by a review).
      const totals = computeTotals(lineItems, terms.taxRate, terms.currency, command.pricingSource === 'supplied' ? 'lineItems' : '');
      return [
        {
          type: 'quote.v1.created',
          data: {
            organizationId,
            quoteId,
            quoteNumber,
            submissionId,
            locale: command.locale,
            terms,
            lineItems,
            totals,
            pricingSource: command.pricingSource,
            validUntil: validUntilOf(at, terms.validityDays),
            quote: { id: quoteId, quoteNumber, version: 1, status: 'draft', total: totals.total, currency: terms.currency },
            customer: command.customer,
            submission: { id: submissionId },
            at,
          },
        },
      ];
    }

    case 'changeQuote': {
      const quote = owned(state, command.organizationId);
      checkIfMatch(quote, command.ifMatch);
      const events: QuoteEvent[] = [];
      const requested = TERM_FIELDS.filter((field) => command.terms[field] !== undefined);
      if (requested.length > 0) {
        const mode = changeMode(quote, command.revise);
        const changes: Partial<QuoteTerms> = {};
        for (const field of requested) {
          if (command.terms[field] !== quote.terms[field]) Object.assign(changes, { [field]: command.terms[field] });
        }
        const terms: QuoteTerms = { ...quote.terms, ...changes };
        const refusedAt = refusalField(changes);
        const lineItems = changes.currency !== undefined ? priceLineItems(quote.lineItems, terms.currency, refusedAt) : undefined;
        const totals = computeTotals(lineItems ?? quote.lineItems, terms.taxRate, terms.currency, refusedAt);
        const validUntil = changes.validityDays !== undefined ? validUntilOf(quote.sentAt ?? quote.createdAt, terms.validityDays) : quote.validUntil;
        const base = { organizationId: quote.organizationId, quoteId: quote.quoteId, at: changedAt(quote, command.at) };
        if (mode === 'revision') {
          const changed = Object.keys(changes);
          events.push({
            type: 'quote.v1.revised',
            data: {
              ...base,
              fromVersion: quote.version,
              version: quote.version + 1,
              changeDescription: changed.length ? `Terms changed: ${changed.join(', ')}` : 'New version',
              changes,
              ...(lineItems ? { lineItems } : {}),
              totals,
              validUntil,
            },
          });
        } else if (Object.keys(changes).length > 0) {
          events.push({ type: 'quote.v1.termsChanged', data: { ...base, version: quote.version, changes, ...(lineItems ? { lineItems } : {}), totals, validUntil } });
        }
      }
      // The link to an external system is not part of what the customer was offered: any status, no new version.
      if (command.externalRef !== undefined && command.externalRef !== quote.externalRef) {
        events.push({ type: 'quote.v1.externalRefChanged', data: { organizationId: quote.organizationId, quoteId: quote.quoteId, externalRef: command.externalRef, at: changedAt(quote, command.at) } });
      }
      return events;
    }

    case 'replaceLineItems': {
      const quote = owned(state, command.organizationId);
      checkIfMatch(quote, command.ifMatch);
      const mode = changeMode(quote, command.revise);
      const lineItems = priceLineItems(command.lineItems, quote.terms.currency);
      const totals = computeTotals(lineItems, quote.terms.taxRate, quote.terms.currency);
      const changeDescription = command.changeDescription ?? 'Line items replaced';
      const base = { organizationId: quote.organizationId, quoteId: quote.quoteId, at: changedAt(quote, command.at) };
      if (mode === 'revision') {
        return [
          {
            type: 'quote.v1.revised',
            data: { ...base, fromVersion: quote.version, version: quote.version + 1, changeDescription, changes: {}, lineItems, totals, validUntil: quote.validUntil },
          },
        ];
      }
      // Line items equal to the current ones change nothing on a draft, as equal terms do: no event,
      // no history entry, the same ETag (found by a review: each such PUT added an entry).
      if (isDeepStrictEqual(lineItems, quote.lineItems)) return [];
      return [{ type: 'quote.v2.lineItemsReplaced', data: { ...base, version: quote.version, lineItems, totals, previousTotals: quote.totals, changeDescription } }];
    }

    case 'sendQuote': {
      const quote = owned(state, command.organizationId);
      // The retry of the keyed request that made the last send (its answer lost in a crash): that
      // send it is, whatever happened since; the customer gets no second e-mail.
      if (command.request !== undefined && quote.lastSendRequest === command.request && command.at - quote.sentAt! < REQUEST_RETRY_WINDOW_MS) return [];
      checkIfMatch(quote, command.ifMatch);
      if (quote.status !== 'draft' && quote.status !== 'sent') throw new QuoteNotSendable(quote.status);
      const link = quote.link ?? command.newLink;
      const at = changedAt(quote, command.at);
      return [
        {
          type: 'quote.v1.sent',
          data: {
            organizationId: quote.organizationId,
            quoteId: quote.quoteId,
            ...subject(quote, 'sent'),
            recipients: command.recipients,
            locale: command.locale ?? quote.locale,
            sentAt: at,
            validUntil: validUntilOf(at, quote.terms.validityDays),
            customerUrl: link.customerUrl,
            tokenHash: link.tokenHash,
            resend: quote.status === 'sent',
            ...(command.request !== undefined && { request: command.request }),
            at,
          },
        },
      ];
    }

    case 'viewQuote': {
      const quote = linked(state, command.tokenHash);
      // Only the first view of a sent version counts; later views change nothing. Nor does a view
      // past validUntil: the quote is expired from that instant, whether or not the expiry check
      // has recorded it yet, and is not "viewed" after it.
      if (quote.status !== 'sent' || command.at >= quote.validUntil) return [];
      return [{ type: 'quote.v1.viewed', data: { organizationId: quote.organizationId, quoteId: quote.quoteId, ...subject(quote, 'viewed'), at: changedAt(quote, command.at) } }];
    }

    case 'acceptQuote':
    case 'rejectQuote': {
      const quote = linked(state, command.tokenHash);
      // The retry of the keyed request that answered the quote (its answer lost in a crash): that
      // answer it is (the request names the action, so an accept's retry never meets a rejection).
      if (command.request !== undefined && quote.answer?.request === command.request && command.at - quote.answer.at < REQUEST_RETRY_WINDOW_MS) return [];
      if (!isOpen(quote)) throw new QuoteNotActionable(quote.status);
      if (command.at >= quote.validUntil) throw new QuoteNotActionable(quote.status, true);
      // The customer answers what they saw: a page still showing v1 must not accept v2.
      if (command.version !== undefined && command.version !== quote.version) throw new QuoteVersionNotCurrent(quote.status, quote.version, command.version);
      const base = { organizationId: quote.organizationId, quoteId: quote.quoteId, at: changedAt(quote, command.at) };
      const request = command.request !== undefined ? { request: command.request } : {};
      return command.type === 'acceptQuote'
        ? [{ type: 'quote.v1.accepted', data: { ...base, ...subject(quote, 'accepted'), name: command.name, ...request } }]
        : [{ type: 'quote.v1.rejected', data: { ...base, ...subject(quote, 'rejected'), name: command.name, reason: command.reason, ...request } }];
    }

    case 'noticeExpiringSoon': {
      if (!state) throw new QuoteNotFound();
      const due = isOpen(state) && command.at < state.validUntil && command.at >= state.validUntil - EXPIRING_SOON_MS;
      // A window of 3 days or less is "expiring soon" from its send: a notice then would only repeat the send.
      const window = state.validUntil - (state.sentAt ?? state.createdAt);
      if (!due || window <= EXPIRING_SOON_MS || state.expiringSoonNoticedFor === state.validUntil) return [];
      return [
        {
          type: 'quote.v1.expiringSoonNoticed',
          data: { organizationId: state.organizationId, quoteId: state.quoteId, ...subject(state, state.status), validUntil: state.validUntil, at: command.at },
        },
      ];
    }

    case 'expireQuote': {
      if (!state) throw new QuoteNotFound();
      if (!isOpen(state) || command.at < state.validUntil) return [];
      return [
        {
          type: 'quote.v1.expired',
          data: { organizationId: state.organizationId, quoteId: state.quoteId, ...subject(state, 'expired'), validUntil: state.validUntil, at: changedAt(state, command.at) },
        },
      ];
    }
  }
}

function evolve(state: QuoteState, event: QuoteEvent): QuoteState {
  if (event.type === 'quote.v1.created') {
    const d = event.data;
    return {
      quoteId: d.quoteId,
      organizationId: d.organizationId,
      submissionId: d.submissionId,
      quoteNumber: d.quoteNumber,
      customer: d.customer,
      locale: d.locale,
      version: 1,
      status: 'draft',
      terms: d.terms,
      lineItems: d.lineItems,
      totals: d.totals,
      externalRef: null,
      createdAt: d.at,
      updatedAt: d.at,
      sentAt: null,
      validUntil: d.validUntil,
      link: null,
      expiringSoonNoticedFor: null,
    };
  }
  if (!state) return state;
  const next: Quote = { ...state, updatedAt: movesUpdatedAt(event) ? event.data.at : state.updatedAt };
  switch (event.type) {
    case 'quote.v1.termsChanged':
      return { ...next, terms: { ...state.terms, ...event.data.changes }, lineItems: event.data.lineItems ?? state.lineItems, totals: event.data.totals, validUntil: event.data.validUntil };
    case 'quote.v2.lineItemsReplaced':
      return { ...next, lineItems: event.data.lineItems, totals: event.data.totals };
    case 'quote.v1.revised':
      return {
        ...next,
        version: event.data.version,
        status: 'draft',
        terms: { ...state.terms, ...event.data.changes },
        lineItems: event.data.lineItems ?? state.lineItems,
        totals: event.data.totals,
        validUntil: event.data.validUntil,
      };
    case 'quote.v1.externalRefChanged':
      return { ...next, externalRef: event.data.externalRef };
    case 'quote.v1.sent':
      return {
        ...next,
        status: 'sent',
        sentAt: event.data.sentAt,
        validUntil: event.data.validUntil,
        link: { tokenHash: event.data.tokenHash, customerUrl: event.data.customerUrl },
        lastSendRequest: event.data.request,
      };
    case 'quote.v1.viewed':
      return { ...next, status: 'viewed' };
    case 'quote.v1.accepted':
    case 'quote.v1.rejected':
      return {
        ...next,
        status: event.type === 'quote.v1.accepted' ? 'accepted' : 'rejected',
        ...(event.data.request !== undefined && { answer: { request: event.data.request, at: event.data.at } }),
      };
    case 'quote.v1.expiringSoonNoticed':
      return { ...next, expiringSoonNoticedFor: event.data.validUntil };
    case 'quote.v1.expired':
      return { ...next, status: 'expired' };
  }
}

export const quoteDecider: Decider<QuoteState, QuoteCommand, QuoteEvent> = { initialState, decide, evolve };
