import { checkedAmount, computeTotals, lineTotal, stripHtml } from '@lib/shared';
import type { PricedLineItem, PricingBreakdown } from './submission.types';

/** One line of an external breakdown as the external system sends it (api-v1 adjustment line item), validated at the edge. */
export interface ExternalLineInput {
  description: string;
  quantity: number;
  unitPrice: number;
  itemType?: string;
  itemKey?: string;
  sortOffset?: number;
  externalRef?: string;
}

/**
 * An external breakdown as it is stored and shown: plain-text descriptions, `other` where no item
 * type was given, and line totals and subtotal computed here in decimal (api-v1: the subtotal is
 * computed server-side), rounded to the currency's minor unit. A breakdown beyond the largest
 * amount of the currency is refused at `lineItems` (AmountTooLarge).
 */
export function priceExternalLineItems(items: readonly ExternalLineInput[], currency: string): PricingBreakdown {
  const lineItems = items.map(
    ({ description, quantity, unitPrice, itemType, itemKey, sortOffset, externalRef }): PricedLineItem => ({
      description: stripHtml(description),
      quantity,
      unitPrice,
      total: checkedAmount(lineTotal(quantity, unitPrice, currency), currency, 'lineItems'),
      itemType: itemType ?? 'other',
      ...(itemKey !== undefined && { itemKey }),
      ...(sortOffset !== undefined && { sortOffset }),
      ...(externalRef !== undefined && { externalRef }),
    }),
  );
  return { lineItems, subtotal: computeTotals(lineItems, 0, currency, 'lineItems').subtotal };
}

/** A copy sorted by `key` when every item has one, ties kept in array order; null when one has none. */
export function sortedIfEveryHas<K extends string, T extends Partial<Record<K, number>>>(items: readonly T[], key: K): T[] | null {
  if (!items.every((item) => item[key] !== undefined)) return null;
  return [...items].sort((a, b) => a[key]! - b[key]!);
}

/**
 * Items in display order (api-v1 adjustment line item `sortOffset`): sorted by it only when every
 * item has one; otherwise the array order stands. A copy either way.
 */
export function inDisplayOrder<T extends { sortOffset?: number }>(items: readonly T[]): T[] {
  return sortedIfEveryHas(items, 'sortOffset') ?? [...items];
}
