import { Inject, Injectable } from '@nestjs/common';
import { EventStore } from '@lib/event-store';
import { quoteLinkUrl } from '@lib/quotes/application/quote-links';
import { quoteStream, type QuoteEvent, type QuoteSent } from '@lib/quotes/domain/quote.events';
import { APP_CONFIG, type AppConfig } from '@lib/shared';
import type { FinalizableDelivery, PayloadFinalizer } from '../webhook-sources';

const STREAM_PAGE = 20;

type QuoteSentData = { quote: { id: string; customerUrl?: unknown } & Record<string, unknown> } & Record<string, unknown>;

/**
 * Adds `data.quote.customerUrl` (`{PUBLIC_BASE_URL}/q/{quoteToken}`, decisions §6) to each attempt
 * of a `quote.sent` delivery. Whoever holds that link can accept or reject the quote, so it is a
 * capability: the delivery log never stores or returns it (api-v1 Authentication 5, decisions §9),
 * and every attempt, retry and redelivery looks it up again. It is the link that opens the quote:
 * a quote keeps the link of its first send for every later one (quote.decider, `sendQuote`), which
 * is derived from the quote id, or kept on the event for quotes first sent before links were
 * derived.
 */
@Injectable()
export class QuoteLinkFinalizer implements PayloadFinalizer {
  readonly eventType = 'quote.sent';

  constructor(
    private readonly events: EventStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async finalize({ payload }: FinalizableDelivery): Promise<Record<string, unknown>> {
    const data = payload.data as QuoteSentData;
    const customerUrl = await this.customerUrl(data.quote.id);
    return { ...payload, data: { ...data, quote: { ...data.quote, customerUrl } } };
  }

  /** Records stored before the link was added per attempt held it in `data.quote`. */
  redact(payload: Record<string, unknown>): Record<string, unknown> {
    const data = payload.data as QuoteSentData | undefined;
    if (!data?.quote || !('customerUrl' in data.quote)) return payload;
    const { customerUrl: _link, ...quote } = data.quote;
    return { ...payload, data: { ...data, quote } };
  }

  /** Reads the quote's stream a page at a time up to its first send: most quotes are sent early in their history. */
  private async customerUrl(quoteId: string): Promise<string> {
    for (let from = 0; ; from += STREAM_PAGE) {
      const page = (await this.events.readStream(quoteStream(quoteId), { fromRevision: from, maxCount: STREAM_PAGE })) as unknown as QuoteEvent[];
      const sent = page.find((event): event is QuoteSent => event.type === 'quote.v1.sent');
      if (sent) return sent.data.customerUrl ?? quoteLinkUrl(this.config, quoteId);
      // No link rather than a wrong one: the attempt fails (`internal_error`) and is retried on the schedule.
      if (page.length < STREAM_PAGE) throw new Error(`quote ${quoteId} has no send to take the customer link from`);
    }
  }
}
