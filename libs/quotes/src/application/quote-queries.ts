import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { withoutBookkeeping } from '@lib/event-sourcing';
import { decodeCursor, encodeCursor, type Page } from '@lib/http';
import { ReadStore, type Filter } from '@lib/read-store';
import type { PdfView } from '../documents/quote-pdfs';
import { QuoteNotFound } from '../domain/quote.errors';
import type { QuoteLineItem, QuoteStatus } from '../domain/quote.events';
import {
  QUOTE_LINKS,
  QUOTE_VERSIONS,
  QUOTES,
  toQuoteListItem,
  type QuoteDocument,
  type QuoteLinkDocument,
  type QuoteSnapshot,
  type QuoteVersionDocument,
} from '../projections/quotes.projection';

/** The customer's token is looked up by this hash only; the token itself is never stored on the read side. */
export function hashQuoteToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface QuoteListQuery {
  organizationId: string;
  status?: QuoteStatus;
  submissionId?: string;
  limit: number;
  cursor?: string;
}

function toLineItem(item: QuoteLineItem) {
  return {
    description: item.description,
    quantity: item.quantity,
    unitPrice: item.unitPrice,
    total: item.total,
    itemType: item.itemType,
    order: item.order,
    itemKey: item.itemKey,
    externalRef: item.externalRef,
  };
}

/** The quote content without `pdf`: what a version-history entry shows. */
export function toQuoteContent(quote: QuoteSnapshot) {
  return { ...toQuoteListItem(quote), notes: quote.notes, lineItems: quote.lineItems.map(toLineItem) };
}

/** api-v1 single-quote read: the content and the current version's PDF. */
export function toQuoteDetail(quote: QuoteSnapshot, pdf: PdfView) {
  return { ...toQuoteContent(quote), pdf };
}

export type QuoteDetail = ReturnType<typeof toQuoteDetail>;

/** What the customer sees behind their link: the version last sent to them, with the live status. */
export function toCustomerQuote(link: QuoteLinkDocument, organization: { name: string }) {
  const { offer } = link;
  return {
    organization: { name: organization.name },
    quoteNumber: offer.quoteNumber,
    version: offer.version,
    status: link.status,
    reference: offer.reference,
    notes: offer.notes,
    currency: offer.currency,
    taxRate: offer.taxRate,
    lineItems: offer.lineItems.map(({ description, quantity, unitPrice, total, itemType, order }) => ({ description, quantity, unitPrice, total, itemType, order })),
    subtotal: offer.subtotal,
    taxAmount: offer.taxAmount,
    total: offer.total,
    validityDays: offer.validityDays,
    validUntil: offer.validUntil,
    sentAt: link.sentAt,
    viewedAt: link.viewedAt,
    respondedAt: link.respondedAt,
  };
}

export type CustomerQuote = ReturnType<typeof toCustomerQuote>;

/** Reads of the quote read models, always scoped to one organization (or to one customer link). */
@Injectable()
export class QuoteQueries {
  constructor(private readonly reads: ReadStore) {}

  /** Another organization's quote is not found, never forbidden. */
  async get(organizationId: string, quoteId: string): Promise<QuoteDocument> {
    const quote = await this.reads.get<QuoteDocument>(QUOTES, quoteId);
    if (!quote || quote.organizationId !== organizationId) throw new QuoteNotFound();
    return withoutBookkeeping(quote);
  }

  /** What the quote list reads from has not changed while this stays the same (ReadStore.changeToken). */
  listChangeToken(): string | null {
    return this.reads.changeToken(QUOTES);
  }

  /**
   * Newest first, keyset-paged on (createdAt, id). Each item is the JSON of the stored list item,
   * passed on as it is: the busiest list is served without decoding and encoding its documents.
   */
  async list(query: QuoteListQuery): Promise<Page<string>> {
    const filter: Filter = { organizationId: query.organizationId };
    if (query.status) filter.status = query.status;
    if (query.submissionId) filter.submissionId = query.submissionId;
    const listed = { status: query.status, submissionId: query.submissionId };
    const { items, nextAfter } = await this.reads.findJson(QUOTES, 'listItem', {
      filter,
      sort: [{ field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }],
      limit: query.limit,
      after: decodeCursor('quotes', query.cursor, listed),
    });
    return { data: items, nextCursor: nextAfter ? encodeCursor('quotes', nextAfter, listed) : null };
  }

  /** GET /quotes/{id}/versions: every state of the quote's content, newest (the current one) first. */
  async versions(organizationId: string, quoteId: string, page: { limit: number; cursor?: string }) {
    await this.get(organizationId, quoteId);
    const list = `quote-versions:${quoteId}`;
    const { items, nextAfter } = await this.reads.find<QuoteVersionDocument>(QUOTE_VERSIONS, {
      filter: { quoteId },
      sort: [{ field: 'seq', direction: 'desc' }, { field: 'id', direction: 'desc' }],
      limit: page.limit,
      after: decodeCursor(list, page.cursor),
    });
    return {
      data: items.map((entry) => ({ version: entry.version, snapshot: toQuoteContent(entry.snapshot), changeDescription: entry.changeDescription, createdAt: entry.createdAt })),
      nextCursor: nextAfter ? encodeCursor(list, nextAfter) : null,
    };
  }

  async findLink(token: string): Promise<QuoteLinkDocument | null> {
    const link = await this.reads.get<QuoteLinkDocument>(QUOTE_LINKS, hashQuoteToken(token));
    return link ? withoutBookkeeping(link) : null;
  }

  /** Quotes whose validity ends at or before `until`, among those a customer can still act on. */
  async openQuotesEndingBy(until: number, limit: number, after?: unknown[]) {
    return this.reads.find<QuoteDocument>(QUOTES, {
      filter: { status: { in: ['sent', 'viewed'] }, validUntil: { lte: until } },
      sort: [{ field: 'status', direction: 'asc' }, { field: 'validUntil', direction: 'asc' }, { field: 'id', direction: 'asc' }],
      limit,
      after,
    });
  }
}
