import { collectionName, type Projection, type ProjectedDocument, type ProjectionContext } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import {
  movesUpdatedAt,
  QUOTE_STREAM,
  type QuoteCreated,
  type QuoteCustomer,
  type QuoteEvent,
  type QuoteLineItem,
  type QuoteStatus,
} from '../domain/quote.events';

/** The quote fields of api-v1 (detail without `pdf`): what a version-history entry preserves. */
export interface QuoteSnapshot {
  id: string;
  submissionId: string;
  quoteNumber: string;
  version: number;
  status: QuoteStatus;
  reference: string | null;
  notes: string | null;
  currency: string;
  taxRate: number;
  validityDays: number;
  validUntil: number;
  lineItems: QuoteLineItem[];
  subtotal: number;
  taxAmount: number;
  total: number;
  sentAt: number | null;
  viewedAt: number | null;
  externalRef: string | null;
  createdAt: number;
  updatedAt: number;
}

/** api-v1 Quote (list item). */
export function toQuoteListItem(quote: QuoteSnapshot) {
  return {
    id: quote.id,
    quoteNumber: quote.quoteNumber,
    version: quote.version,
    status: quote.status,
    submissionId: quote.submissionId,
    reference: quote.reference,
    validUntil: quote.validUntil,
    validityDays: quote.validityDays,
    subtotal: quote.subtotal,
    taxAmount: quote.taxAmount,
    total: quote.total,
    taxRate: quote.taxRate,
    currency: quote.currency,
    sentAt: quote.sentAt,
    viewedAt: quote.viewedAt,
    externalRef: quote.externalRef,
    createdAt: quote.createdAt,
    updatedAt: quote.updatedAt,
  };
}

export type QuoteListItem = ReturnType<typeof toQuoteListItem>;

/** What the read side keeps of a quote: the API fields and what it needs to find and check it. */
interface QuoteFields extends ProjectedDocument, QuoteSnapshot {
  organizationId: string;
  customer: QuoteCustomer;
  /** the customer link's hash, once sent */
  tokenHash: string | null;
  expiringSoonNoticedFor: number | null;
  /** sequence number of the version-history entry that the current state belongs to */
  historySeq: number;
}

/** One quote as the API shows it, plus what the read side needs to find and check it. */
export interface QuoteDocument extends QuoteFields {
  /** the list item, kept ready: GET /quotes answers with its stored JSON as it is (ReadStore.findJson) */
  listItem: QuoteListItem;
}

/**
 * One entry of GET /quotes/{id}/versions: a state of the quote's content. A new entry starts
 * with every new version (revision) and with every line-item replacement of a draft; later
 * changes of the same state (terms of a draft, send, view, decision) update the entry, so an
 * entry always shows its state as it last stood: a sent version exactly as it was sent.
 */
export interface QuoteVersionDocument extends ProjectedDocument {
  id: string;
  organizationId: string;
  quoteId: string;
  seq: number;
  version: number;
  snapshot: QuoteSnapshot;
  changeDescription: string | null;
  createdAt: number;
}

/** What the customer was last sent: content frozen at the send, status live. Keyed by the link's token hash. */
export interface QuoteLinkDocument extends ProjectedDocument {
  id: string;
  organizationId: string;
  quoteId: string;
  status: QuoteStatus;
  offer: CustomerOffer;
  sentAt: number;
  viewedAt: number | null;
  respondedAt: number | null;
}

export type CustomerOffer = Pick<
  QuoteSnapshot,
  'quoteNumber' | 'version' | 'reference' | 'notes' | 'currency' | 'taxRate' | 'validityDays' | 'validUntil' | 'lineItems' | 'subtotal' | 'taxAmount' | 'total'
>;

export const versionEntryId = (quoteId: string, seq: number) => `${quoteId}:${String(seq).padStart(6, '0')}`;

export function snapshotOf(quote: QuoteDocument): QuoteSnapshot {
  const { id, submissionId, quoteNumber, version, status, reference, notes, currency, taxRate, validityDays, validUntil } = quote;
  const { lineItems, subtotal, taxAmount, total, sentAt, viewedAt, externalRef, createdAt, updatedAt } = quote;
  return { id, submissionId, quoteNumber, version, status, reference, notes, currency, taxRate, validityDays, validUntil, lineItems, subtotal, taxAmount, total, sentAt, viewedAt, externalRef, createdAt, updatedAt };
}

function offerOf(quote: QuoteDocument): CustomerOffer {
  const { quoteNumber, version, reference, notes, currency, taxRate, validityDays, validUntil, lineItems, subtotal, taxAmount, total } = quote;
  return { quoteNumber, version, reference, notes, currency, taxRate, validityDays, validUntil, lineItems, subtotal, taxAmount, total };
}

/** The document with its list item brought up to date. */
function withListItem(quote: QuoteFields): QuoteDocument {
  return { ...quote, listItem: toQuoteListItem(quote) };
}

/** The quote document after one event (not `created`). */
function applied(quote: QuoteDocument, event: Exclude<QuoteEvent, QuoteCreated>): QuoteDocument {
  const next: QuoteDocument = { ...quote, updatedAt: movesUpdatedAt(event) ? event.data.at : quote.updatedAt };
  switch (event.type) {
    case 'quote.v1.termsChanged':
    case 'quote.v1.revised':
      Object.assign(next, event.data.changes, {
        lineItems: event.data.lineItems ?? quote.lineItems,
        ...event.data.totals,
        validUntil: event.data.validUntil,
      });
      if (event.type === 'quote.v1.revised') Object.assign(next, { version: event.data.version, status: 'draft' });
      return next;
    case 'quote.v2.lineItemsReplaced':
      return { ...next, lineItems: event.data.lineItems, ...event.data.totals };
    case 'quote.v1.externalRefChanged':
      return { ...next, externalRef: event.data.externalRef };
    case 'quote.v1.sent':
      // A send starts the customer's view anew: the version sent has not been viewed yet.
      return { ...next, status: 'sent', sentAt: event.data.sentAt, viewedAt: null, validUntil: event.data.validUntil, tokenHash: event.data.tokenHash };
    case 'quote.v1.viewed':
      return { ...next, status: 'viewed', viewedAt: event.data.at };
    case 'quote.v1.accepted':
      return { ...next, status: 'accepted' };
    case 'quote.v1.rejected':
      return { ...next, status: 'rejected' };
    case 'quote.v1.expired':
      return { ...next, status: 'expired' };
    case 'quote.v1.expiringSoonNoticed':
      return { ...next, expiringSoonNoticedFor: event.data.validUntil };
  }
}

function startsVersionEntry(event: QuoteEvent): { changeDescription: string } | null {
  return event.type === 'quote.v1.revised' || event.type === 'quote.v2.lineItemsReplaced' ? { changeDescription: event.data.changeDescription } : null;
}

async function updateLink(context: ProjectionContext, quote: QuoteDocument, event: QuoteEvent): Promise<void> {
  if (event.type === 'quote.v1.sent') {
    context.put('quote_links', {
      id: event.data.tokenHash,
      organizationId: quote.organizationId,
      quoteId: quote.id,
      status: quote.status,
      offer: offerOf(quote),
      sentAt: event.data.sentAt,
      viewedAt: null,
      respondedAt: null,
    } satisfies QuoteLinkDocument);
    return;
  }
  if (!quote.tokenHash) return;
  const link = await context.get<QuoteLinkDocument>('quote_links', quote.tokenHash);
  if (!link || link.status === quote.status) return;
  const respondedAt = event.type === 'quote.v1.accepted' || event.type === 'quote.v1.rejected' ? event.data.at : link.respondedAt;
  context.put('quote_links', { ...link, status: quote.status, viewedAt: quote.viewedAt, respondedAt } satisfies QuoteLinkDocument);
}

export const quotesProjection: Projection = {
  name: 'quotes',
  // v2: quote documents carry their list item. v3: a send clears viewedAt (a quote viewed, revised
  // and sent again showed the earlier view).
  version: 3,
  collections: {
    // GET /quotes: newest first, filtered by status and/or submissionId, answered from the index
    // (it includes the list item); the expiry check by status and validUntil.
    quotes: [
      { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }], include: ['listItem'] },
      { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'status', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }], include: ['listItem'] },
      { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'submissionId', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }], include: ['listItem'] },
      { fields: [{ field: 'status', direction: 'asc' }, { field: 'validUntil', direction: 'asc' }, { field: 'id', direction: 'asc' }] },
    ],
    quote_versions: [{ fields: [{ field: 'quoteId', direction: 'asc' }, { field: 'seq', direction: 'desc' }, { field: 'id', direction: 'desc' }] }],
    // audit:quote: every link stored for a quote, including any the quote's events never sent.
    quote_links: [{ fields: [{ field: 'quoteId', direction: 'asc' }, { field: 'id', direction: 'asc' }] }],
  },
  filter: { streamPrefixes: [QUOTE_STREAM] },
  async handle(recorded: RecordedEvent, context) {
    const event = recorded as unknown as QuoteEvent;
    if (event.type === 'quote.v1.created') {
      const d = event.data;
      const quote = withListItem({
        id: d.quoteId,
        organizationId: d.organizationId,
        submissionId: d.submissionId,
        quoteNumber: d.quoteNumber,
        version: 1,
        status: 'draft',
        customer: d.customer,
        reference: d.terms.reference,
        notes: d.terms.notes,
        currency: d.terms.currency,
        taxRate: d.terms.taxRate,
        validityDays: d.terms.validityDays,
        validUntil: d.validUntil,
        lineItems: d.lineItems,
        ...d.totals,
        sentAt: null,
        viewedAt: null,
        externalRef: null,
        createdAt: d.at,
        updatedAt: d.at,
        tokenHash: null,
        expiringSoonNoticedFor: null,
        historySeq: 0,
      });
      context.put('quotes', quote);
      context.put('quote_versions', {
        id: versionEntryId(quote.id, 0),
        organizationId: quote.organizationId,
        quoteId: quote.id,
        seq: 0,
        version: 1,
        snapshot: snapshotOf(quote),
        changeDescription: null,
        createdAt: d.at,
      } satisfies QuoteVersionDocument);
      return;
    }
    const current = await context.get<QuoteDocument>('quotes', event.data.quoteId);
    // Null when this event is already applied (a replay): nothing to do.
    if (!current) return;
    const quote = applied(current, event);
    const entry = startsVersionEntry(event);
    if (entry) {
      quote.historySeq = current.historySeq + 1;
      context.put('quote_versions', {
        id: versionEntryId(quote.id, quote.historySeq),
        organizationId: quote.organizationId,
        quoteId: quote.id,
        seq: quote.historySeq,
        version: quote.version,
        snapshot: snapshotOf(quote),
        changeDescription: entry.changeDescription,
        createdAt: event.data.at,
      } satisfies QuoteVersionDocument);
    } else {
      const version = await context.get<QuoteVersionDocument>('quote_versions', versionEntryId(quote.id, quote.historySeq));
      if (version) context.put('quote_versions', { ...version, snapshot: snapshotOf(quote) });
    }
    await updateLink(context, quote, event);
    context.put('quotes', withListItem(quote));
  },
};

export const QUOTES = collectionName(quotesProjection, 'quotes');
export const QUOTE_VERSIONS = collectionName(quotesProjection, 'quote_versions');
export const QUOTE_LINKS = collectionName(quotesProjection, 'quote_links');
