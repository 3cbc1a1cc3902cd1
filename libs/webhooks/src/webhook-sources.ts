import type { EventFilter, RecordedEvent } from '@lib/event-store';

/** A webhook event to deliver, derived from one domain event (decisions §9). */
export interface WebhookEventDraft {
  /** webhook event name, e.g. `quote.sent`, `pricing.calculated` */
  type: string;
  organizationId: string;
  /** the subject record of the delivery log (`quote`, `submission`, `lead`, `session`) */
  entityType: string;
  entityId: string;
  /** envelope `data` (without secrets: the pricing callback is added per attempt) */
  data: Record<string, unknown>;
  customerLocale: string | null;
  /** pricing events: fast path with PRICING_RETRY_SCHEDULE_MS, sent to pricingWebhookUrl when set */
  fastPath: boolean;
}

/**
 * Turns domain events into webhook events. Each domain library that emits webhooks registers a
 * source in `WebhookSourceRegistry`; the outbox calls them, never a request handler or projection.
 * Deterministic: the same domain event always yields the same drafts (the outbox deduplicates
 * on domain event id + draft type, so at-least-once relaying creates each delivery once).
 */
export interface WebhookSource {
  name: string;
  filter: EventFilter;
  toWebhookEvents(event: RecordedEvent): Promise<WebhookEventDraft[]>;
}

/**
 * Adds per-attempt secrets to a payload just before it is signed and sent (the pricing callback
 * with its capability token), and removes them from what the delivery log stores and returns.
 */
export interface PayloadFinalizer {
  eventType: string;
  /** `generation` increases with every redelivery; a new generation must mint a new token */
  finalize(delivery: FinalizableDelivery): Promise<Record<string, unknown>>;
  /**
   * Optional: removes secret-bearing fields from a payload before the delivery log stores it and
   * whenever it returns it (GET /events/{id}). Drafts should not carry secrets in the first place;
   * this is the second line of defence.
   */
  redact?(payload: Record<string, unknown>): Record<string, unknown>;
}

/**
 * Thrown by a finalizer when the service itself cannot make the attempt yet (its read side has
 * not caught up with what the payload needs): nothing is sent, the attempt is made again shortly,
 * and it does not count against the delivery's budget of attempts. The record stays `pending` for
 * as long as that lasts: the budget is for failures of attempts that were made.
 */
export class NotReadyToSend extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotReadyToSend';
  }
}

/** What a finalizer sees of a delivery, on every attempt. */
export interface FinalizableDelivery {
  /** the delivery record id (X-Service-Delivery): stable across retries and redeliveries */
  id: string;
  organizationId: string;
  /** 1 on creation, +1 per redelivery */
  generation: number;
  /** the stored (redacted) envelope; return a new object, do not mutate it */
  payload: Record<string, unknown>;
}
