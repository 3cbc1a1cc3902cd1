import { Injectable } from '@nestjs/common';
import { EventStore, type RecordedEvent } from '@lib/event-store';
import { QUOTE_STREAM, type QuoteEvent, type QuoteEventSubject } from '@lib/quotes/domain/quote.events';
import type { WebhookEventDraft, WebhookSource } from '../webhook-sources';

/** Domain event → webhook event name of every `quote.*` event of decisions §9. */
export const QUOTE_WEBHOOK_TYPES: Partial<Record<QuoteEvent['type'], string>> = {
  'quote.v1.created': 'quote.created',
  'quote.v1.sent': 'quote.sent',
  'quote.v1.viewed': 'quote.viewed',
  'quote.v1.accepted': 'quote.accepted',
  'quote.v1.rejected': 'quote.rejected',
  'quote.v1.expiringSoonNoticed': 'quote.expiring_soon',
  'quote.v1.expired': 'quote.expired',
};

/** The fields every quote event holds (decisions §9), as they were when the event happened. */
function subjectData(subject: QuoteEventSubject): Record<string, unknown> {
  const q = subject.quote;
  return {
    quote: { id: q.id, quoteNumber: q.quoteNumber, version: q.version, status: q.status, total: q.total, currency: q.currency },
    customer: { name: subject.customer.name, email: subject.customer.email },
    submission: { id: subject.submission.id },
  };
}

/**
 * The `quote.*` webhooks. Quote events carry their subject (number, version, status, total,
 * customer) as it was at that moment. The customer's locale is on `created` and `sent` only; for
 * the other events it is read from the quote's own stream up to that event, so the result
 * depends on nothing that may have moved on since. The customer link of `quote.sent` is a
 * capability: QuoteLinkFinalizer adds it per attempt, so the delivery log never holds it.
 */
@Injectable()
export class QuoteWebhookSource implements WebhookSource {
  readonly name = 'quotes';
  readonly filter = { streamPrefixes: [QUOTE_STREAM], eventTypePrefixes: Object.keys(QUOTE_WEBHOOK_TYPES) };

  constructor(private readonly events: EventStore) {}

  async toWebhookEvents(recorded: RecordedEvent): Promise<WebhookEventDraft[]> {
    const event = recorded as unknown as QuoteEvent;
    const type = QUOTE_WEBHOOK_TYPES[event.type];
    if (!type) return [];
    const data = subjectData(event.data as QuoteEventSubject);
    switch (event.type) {
      case 'quote.v1.created':
        data.lineItems = event.data.lineItems.map((item) => ({
          description: item.description,
          quantity: item.quantity,
          unitPrice: item.unitPrice,
          total: item.total,
          itemType: item.itemType,
          itemKey: item.itemKey,
          externalRef: item.externalRef,
          order: item.order,
        }));
        break;
      case 'quote.v1.accepted':
        data.acceptance = { name: event.data.name };
        break;
      case 'quote.v1.rejected':
        data.rejection = { name: event.data.name, reason: event.data.reason };
        break;
      default:
        break;
    }
    return [
      {
        type,
        organizationId: event.data.organizationId,
        entityType: 'quote',
        entityId: event.data.quoteId,
        customerLocale: await this.customerLocale(recorded),
        fastPath: false,
        data,
      },
    ];
  }

  /** The locale the customer is addressed in: that of the latest send, else the quote's own. */
  private async customerLocale(recorded: RecordedEvent): Promise<string | null> {
    const event = recorded as unknown as QuoteEvent;
    if (event.type === 'quote.v1.created' || event.type === 'quote.v1.sent') return event.data.locale;
    const history = await this.events.readStream(recorded.streamId, { maxCount: recorded.revision + 1 });
    let locale: string | null = null;
    for (const past of history as unknown as QuoteEvent[]) {
      if (past.type === 'quote.v1.created' || past.type === 'quote.v1.sent') locale = past.data.locale;
    }
    return locale;
  }
}
