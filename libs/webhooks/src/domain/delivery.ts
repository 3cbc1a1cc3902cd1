import { createHash } from 'node:crypto';
import type { ReadDocument } from '@lib/read-store';
import { REQUEST_RETRY_WINDOW_MS } from '@lib/shared';

/** Every webhook event name of decisions §9. */
export const WEBHOOK_EVENT_TYPES = [
  'submission.created',
  'quote.created',
  'quote.sent',
  'quote.viewed',
  'quote.accepted',
  'quote.rejected',
  'quote.expiring_soon',
  'quote.expired',
  'lead.created',
  'pricing.calculated',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const DELIVERY_STATUSES = ['pending', 'processing', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Which of the organization's URLs a delivery goes to: `webhookUrl`, or `pricingWebhookUrl` (falling back to `webhookUrl`). */
export type DeliveryTarget = 'webhook' | 'pricing';

/**
 * Payload cap of one delivery body (UTF-8 bytes of the JSON): twice the largest request body the
 * API takes (1 MiB), so that every event the API can cause is sent whole, line items included, as
 * api-v1 says `quote.created` and `submission.created` carry them. Only an event over it (none of
 * the product's comes near) is sent without its line items (withoutLineItems).
 */
export const MAX_PAYLOAD_BYTES = 2 * 1024 * 1024;

export const ENVELOPE_VERSION = '1.0';

/**
 * The delivery's generation, sent on every attempt beside X-Service-Delivery: 1 for the first
 * delivery of a record, +1 per redelivery, the same on the retries within one. The delivery id is
 * the same on retries and redeliveries (decisions §9), but a redelivered `pricing.calculated`
 * carries a new capability URL and supersedes the old one. This header is not signed, so it is a
 * hint only: what a receiver deduplicates on is signed (`webhook-id`, see standardWebhookId, or
 * the id with `data.callback.generation` of a pricing body).
 */
export const GENERATION_HEADER = 'X-Service-Delivery-Generation';

/**
 * The Standard Webhooks `webhook-id` of one generation of a delivery: the delivery id for the
 * first generation (and so on all its retries), `<id>_g<n>` for the n-th. Standard Webhooks
 * receivers deduplicate on `webhook-id`, and it is part of what `webhook-signature` signs, so a
 * redelivery is kept, a retry dropped, and a replayed attempt cannot claim another generation.
 * No `.` in it, as the specification asks (the signed content joins id, timestamp and body with
 * dots). Delivery ids are `evt_<hex>`, so the suffix cannot be read any other way.
 */
export function standardWebhookId(deliveryId: string, generation: number): string {
  return generation <= 1 ? deliveryId : `${deliveryId}_g${generation}`;
}

/**
 * The envelope without its line items, for one over the cap. Line items are the only part of an
 * event that grows with what people type: every `lineItems` array in `data` is left out and
 * `lineItemsOmitted: true` stands beside where it was, so a receiver knows to read them through
 * the API (`GET /quotes/{id}`, `GET /submissions/{id}`). Null when there are none to leave out.
 */
export function withoutLineItems(envelope: WebhookEnvelope): WebhookEnvelope | null {
  let omitted = false;
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value === null || typeof value !== 'object') return value;
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      if (key === 'lineItems' && Array.isArray(field)) {
        omitted = true;
        copy.lineItemsOmitted = true;
      } else {
        copy[key] = strip(field);
      }
    }
    return copy;
  };
  const data = strip(envelope.data);
  return omitted ? { ...envelope, data: data as WebhookEnvelope['data'] } : null;
}

/** The JSON body of a delivery (api-v1 Events envelope plus decisions §9). */
export interface WebhookEnvelope {
  version: typeof ENVELOPE_VERSION;
  id: string;
  event: string;
  eventType: string;
  /** ISO 8601 UTC of the domain event */
  timestamp: string;
  organization: { id: string; name: string; slug: string };
  orgLocale: string;
  customerLocale: string | null;
  data: Record<string, unknown>;
  [field: string]: unknown;
}

/**
 * A delivery record of the delivery log (api-v1 "Delivery record"). Kept in an outbox-owned
 * collection, not a projection: a projection rebuild never touches it. `_rev` increases with every
 * write and guards each write (compare-and-set), so the dispatcher, a redelivery and a start-up
 * recovery never overwrite each other.
 */
export interface DeliveryRecord extends ReadDocument {
  id: string;
  type: string;
  entityType: string;
  entityId: string;
  status: DeliveryStatus;
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
  scheduledFor: number;
  deliveredAt: number | null;
  createdAt: number;
  updatedAt: number;
  organizationId: string;
  /** 1 on creation, +1 with every redelivery (a pricing finalizer mints a new token per generation) */
  generation: number;
  target: DeliveryTarget;
  /** pricing events: dispatched the moment they are created or due, retried on PRICING_RETRY_SCHEDULE_MS */
  fastPath: boolean;
  /** the envelope as stored and shown by GET /events/{id}: never holds a per-attempt secret */
  payload: WebhookEnvelope;
  /** the domain event the delivery was derived from */
  sourceEventId: string;
  lastAttemptAt: number | null;
  /** while `processing`: when the attempt is considered abandoned (its process died) */
  leaseUntil: number | null;
  /**
   * while `processing`: the process whose outbox makes the attempt (`<host>/<pid>/<token>`, see
   * processOwner; the host alone on records claimed 2026-11-26 to 2026-11-27; absent before)
   */
  leaseOwner?: string | null;
  /**
   * The keyed requests (idempotentId) that redelivered it in the last REQUEST_RETRY_WINDOW_MS, and
   * when: the retry of one after a lost answer is answered as the first was instead of
   * redelivering again, whatever redeliveries came between. Absent before any keyed redelivery.
   */
  redeliveredBy?: Record<string, number>;
  _rev: number;
}

/** Deterministic delivery id: the same domain event and draft always give the same record. */
export function deliveryId(domainEventId: string, type: string, entityId: string): string {
  const digest = createHash('sha256').update(`${domainEventId}\n${type}\n${entityId}`).digest('hex');
  return `evt_${digest.slice(0, 32)}`;
}

/**
 * The wait before attempt number `attemptIndex + 1` (0-based index into the schedule), with up to
 * +10 % jitter so that many deliveries failing together do not retry in lockstep. The jitter only
 * ever adds: the schedule is the delay before each attempt (decisions §1), so no attempt comes
 * earlier than configured. A zero delay stays zero. `random` returns a number in [0, 1).
 */
export function retryDelay(schedule: readonly number[], attemptIndex: number, random: () => number = Math.random): number {
  if (schedule.length === 0) return 0;
  const base = schedule[Math.min(attemptIndex, schedule.length - 1)];
  if (base <= 0) return 0;
  return base + Math.floor(random() * 0.1 * base);
}

/** What one attempt came to. `terminal` failures (410, payload too large) stop the retries. */
export type AttemptOutcome = { delivered: true } | { delivered: false; error: string; terminal: boolean };

/** The record after an attempt: delivered, failed (budget spent or terminal), or pending with the next attempt scheduled. */
export function afterAttempt(
  record: DeliveryRecord,
  outcome: AttemptOutcome,
  now: number,
  schedule: readonly number[],
  random: () => number = Math.random,
): DeliveryRecord {
  const attempts = record.attempts + 1;
  const base = { ...record, attempts, lastAttemptAt: now, leaseUntil: null, leaseOwner: null, updatedAt: now };
  if (outcome.delivered) return { ...base, status: 'delivered', deliveredAt: record.deliveredAt ?? now };
  if (outcome.terminal || attempts >= record.maxAttempts) return { ...base, status: 'failed', lastError: outcome.error };
  return { ...base, status: 'pending', lastError: outcome.error, scheduledFor: now + retryDelay(schedule, attempts, random) };
}

/**
 * An attempt the service could not make yet (NotReadyToSend): nothing was sent, so the record is
 * pending again, due after `delayMs`, with its attempts and last error as they were.
 */
export function postponed(record: DeliveryRecord, now: number, delayMs: number): DeliveryRecord {
  return { ...record, status: 'pending', scheduledFor: now + delayMs, leaseUntil: null, leaseOwner: null, updatedAt: now };
}

/** A record already in the pipeline cannot be redelivered (409 `already_in_flight`). */
export function isInFlight(record: Pick<DeliveryRecord, 'status'>): boolean {
  return record.status === 'pending' || record.status === 'processing';
}

/**
 * POST /events/{id}/redeliver: back into the normal pipeline with a fresh budget and the next
 * generation (the id, and with it X-Service-Delivery, stays the same).
 */
export function redelivered(record: DeliveryRecord, now: number, schedule: readonly number[], request?: string, random: () => number = Math.random): DeliveryRecord {
  const { redeliveredBy: before, ...rest } = record;
  // Requests older than their retry window are forgotten: the same request later is a new one.
  const recent = Object.entries(before ?? {}).filter(([, at]) => now - at < REQUEST_RETRY_WINDOW_MS);
  const requests = request === undefined ? recent : [...recent, [request, now] as const];
  return {
    ...rest,
    ...(requests.length > 0 ? { redeliveredBy: Object.fromEntries(requests) } : {}),
    status: 'pending',
    attempts: 0,
    maxAttempts: Math.max(1, schedule.length),
    generation: record.generation + 1,
    scheduledFor: now + retryDelay(schedule, 0, random),
    leaseUntil: null,
    updatedAt: now,
  };
}

/** The fields of the delivery log as the external API shows them. */
export interface PublicDeliveryRecord {
  id: string;
  type: string;
  entityType: string;
  entityId: string;
  status: DeliveryStatus;
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
  scheduledFor: number;
  deliveredAt: number | null;
  createdAt: number;
  /** the generation the last or next attempt is sent with (X-Service-Delivery-Generation) */
  generation: number;
}

export function toPublicDelivery(record: DeliveryRecord): PublicDeliveryRecord {
  return {
    id: record.id,
    type: record.type,
    entityType: record.entityType,
    entityId: record.entityId,
    status: record.status,
    attempts: record.attempts,
    maxAttempts: record.maxAttempts,
    lastError: record.lastError,
    scheduledFor: record.scheduledFor,
    deliveredAt: record.deliveredAt,
    createdAt: record.createdAt,
    generation: record.generation,
  };
}
