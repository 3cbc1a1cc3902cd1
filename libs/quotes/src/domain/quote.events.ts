import type { ItemType } from '@lib/templates';
// Every reader of quote events (aggregate, projections, audit) gets the upcasters with the types.
import './quote.upcasters';

export const QUOTE_STATUSES = ['draft', 'sent', 'viewed', 'accepted', 'rejected', 'expired'] as const;
export type QuoteStatus = (typeof QUOTE_STATUSES)[number];

/** Where the line items of a new quote came from. */
export type PricingSource = 'supplied' | 'external' | 'base';

/** The commercial terms of a quote: everything PATCH /quotes/{id} can change except externalRef. */
export interface QuoteTerms {
  currency: string;
  /** a percentage, e.g. 21 */
  taxRate: number;
  validityDays: number;
  reference: string | null;
  notes: string | null;
}

export const TERM_FIELDS = ['currency', 'taxRate', 'validityDays', 'reference', 'notes'] as const satisfies ReadonlyArray<keyof QuoteTerms>;

/** A line item as the caller supplies it, validated and with HTML stripped; the quote prices it. */
export interface QuoteLineInput {
  description: string;
  quantity: number;
  unitPrice: number;
  itemType: ItemType;
  itemKey: string | null;
  externalRef: string | null;
}

/** A priced line of a quote. */
export interface QuoteLineItem extends QuoteLineInput {
  /** quantity × unitPrice, rounded half-up to the currency's minor unit */
  total: number;
  /** 0-based position in the quote */
  order: number;
}

export interface QuoteTotals {
  subtotal: number;
  taxAmount: number;
  total: number;
}

export interface QuoteCustomer {
  name: string | null;
  email: string | null;
}

/**
 * What every externally visible quote event carries (decisions §9), as it was when the event
 * happened, so a webhook never has to read a read model that may have moved on since.
 */
export interface QuoteEventSubject {
  quote: { id: string; quoteNumber: string; version: number; status: QuoteStatus; total: number; currency: string };
  customer: QuoteCustomer;
  submission: { id: string };
}

/**
 * The customer's link (decisions §6): only the hash identifies the quote on the read side.
 * `customerUrl` is null for links derived from the quote id (quoteLinkUrl), which keeps the token
 * out of the event store; quotes first sent before that carry the URL as it was sent.
 */
export interface QuoteLink {
  tokenHash: string;
  customerUrl: string | null;
}

interface Base {
  organizationId: string;
  quoteId: string;
  at: number;
}

export type QuoteCreated = {
  type: 'quote.v1.created';
  data: Base &
    QuoteEventSubject & {
      quoteNumber: string;
      submissionId: string;
      /** the customer's messaging locale, the default for sending */
      locale: string;
      terms: QuoteTerms;
      lineItems: QuoteLineItem[];
      totals: QuoteTotals;
      pricingSource: PricingSource;
      validUntil: number;
    };
};

/** A draft's terms changed in place. Line items are re-priced only when the currency changed. */
export type QuoteTermsChanged = {
  type: 'quote.v1.termsChanged';
  data: Base & { version: number; changes: Partial<QuoteTerms>; lineItems?: QuoteLineItem[]; totals: QuoteTotals; validUntil: number };
};

/**
 * A draft's breakdown was replaced; the previous one stays in the version history. v2 adds the
 * totals of the breakdown it replaced, so the change in value is in the event itself (audits,
 * exports). Stored v1 events are upcast on read (quote.upcasters.ts).
 */
export type QuoteLineItemsReplaced = {
  type: 'quote.v2.lineItemsReplaced';
  data: Base & {
    version: number;
    lineItems: QuoteLineItem[];
    totals: QuoteTotals;
    /** null on events stored as v1, which did not record them */
    previousTotals: QuoteTotals | null;
    changeDescription: string;
  };
};

/** The shipped v1 shape, as it stays in the store; never emitted any more. */
export type QuoteLineItemsReplacedV1 = {
  type: 'quote.v1.lineItemsReplaced';
  data: Base & { version: number; lineItems: QuoteLineItem[]; totals: QuoteTotals; changeDescription: string };
};

/**
 * A sent or viewed quote became a new draft version with the given changes; the version it
 * replaces stays in the history exactly as the customer saw it.
 */
export type QuoteRevised = {
  type: 'quote.v1.revised';
  data: Base & {
    fromVersion: number;
    version: number;
    changeDescription: string;
    changes: Partial<QuoteTerms>;
    lineItems?: QuoteLineItem[];
    totals: QuoteTotals;
    validUntil: number;
  };
};

export type QuoteExternalRefChanged = {
  type: 'quote.v1.externalRefChanged';
  data: Base & { externalRef: string | null };
};

export type QuoteSent = {
  type: 'quote.v1.sent';
  data: Base &
    QuoteEventSubject & {
      recipients: string[];
      locale: string;
      sentAt: number;
      validUntil: number;
      /**
       * `{PUBLIC_BASE_URL}/q/{quoteToken}`, the same link on every send of the quote; null when the
       * link is derived from the quote id (quoteLinkUrl), so that no token is stored
       */
      customerUrl: string | null;
      tokenHash: string;
      /** true on a re-send of an already sent version */
      resend: boolean;
      /** the keyed request that sent it (idempotentId): its retry sends nothing more; absent without a key */
      request?: string;
    };
};

export type QuoteViewed = { type: 'quote.v1.viewed'; data: Base & QuoteEventSubject };

/** The customer's keyed request that answered (idempotentId): its retry answers as the first did; absent without a key. */
type AnswerRequest = { request?: string };

export type QuoteAccepted = { type: 'quote.v1.accepted'; data: Base & QuoteEventSubject & { name: string | null } & AnswerRequest };

export type QuoteRejected = { type: 'quote.v1.rejected'; data: Base & QuoteEventSubject & { name: string | null; reason: string | null } & AnswerRequest };

export type QuoteExpiringSoonNoticed = { type: 'quote.v1.expiringSoonNoticed'; data: Base & QuoteEventSubject & { validUntil: number } };

export type QuoteExpired = { type: 'quote.v1.expired'; data: Base & QuoteEventSubject & { validUntil: number } };

export type QuoteEvent =
  | QuoteCreated
  | QuoteTermsChanged
  | QuoteLineItemsReplaced
  | QuoteRevised
  | QuoteExternalRefChanged
  | QuoteSent
  | QuoteViewed
  | QuoteAccepted
  | QuoteRejected
  | QuoteExpiringSoonNoticed
  | QuoteExpired;

export type QuoteEventType = QuoteEvent['type'];

/**
 * Every event but the expiring-soon notice changes what the API shows, so it moves `updatedAt`
 * (and with it the ETag). The notice is bookkeeping of the expiry check.
 */
export function movesUpdatedAt(event: QuoteEvent): boolean {
  return event.type !== 'quote.v1.expiringSoonNoticed';
}

export const QUOTE_STREAM = 'quote-';
export const quoteStream = (quoteId: string) => `${QUOTE_STREAM}${quoteId}`;

export const DAY_MS = 24 * 60 * 60 * 1000;
/** decisions §7: the expiring-soon notice goes out this long before validUntil. */
export const EXPIRING_SOON_MS = 3 * DAY_MS;
