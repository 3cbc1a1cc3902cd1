import { inDisplayOrder, sortedIfEveryHas } from '@lib/submissions';
import { ITEM_TYPES, type ItemType } from '@lib/templates';
import type { QuoteLineInput } from '../domain/quote.events';

/** A line item as it arrives: from a request body, or from a submission's base or frozen external pricing. */
export interface IncomingLineItem {
  description: string;
  quantity: number;
  unitPrice: number;
  itemType?: string;
  itemKey?: string | null;
  externalRef?: string | null;
  order?: number;
  sortOffset?: number;
}

const isItemType = (value: unknown): value is ItemType => (ITEM_TYPES as readonly unknown[]).includes(value);

/**
 * The quote's lines in order. The array order is the line order, unless every item carries an
 * `order` (or, failing that, every item a `sortOffset`): then they are sorted by it, ties kept in
 * array order, so a breakdown sent back with its display positions keeps them. Items without an
 * `itemType` are `other`.
 */
export function toQuoteLines(items: readonly IncomingLineItem[]): QuoteLineInput[] {
  const ordered = sortedIfEveryHas(items, 'order') ?? inDisplayOrder(items);
  return ordered.map((item) => ({
    description: item.description,
    quantity: item.quantity,
    unitPrice: item.unitPrice,
    itemType: isItemType(item.itemType) ? item.itemType : 'other',
    itemKey: item.itemKey ?? null,
    externalRef: item.externalRef ?? null,
  }));
}
