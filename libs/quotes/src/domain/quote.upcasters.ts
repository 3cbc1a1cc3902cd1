import { registerUpcaster } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import type { QuoteLineItemsReplaced, QuoteLineItemsReplacedV1 } from './quote.events';

/** v1 did not record the totals it replaced: they read as null (the replay before it knows them). */
export function upcastLineItemsReplacedV1(event: RecordedEvent): RecordedEvent {
  const { data } = event as unknown as QuoteLineItemsReplacedV1;
  const upcast: QuoteLineItemsReplaced = { type: 'quote.v2.lineItemsReplaced', data: { ...data, previousTotals: null } };
  return { ...event, ...upcast } as RecordedEvent;
}

registerUpcaster('quote.v1.lineItemsReplaced', upcastLineItemsReplacedV1);
