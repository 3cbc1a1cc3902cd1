import { Inject, Injectable } from '@nestjs/common';
import { decodeCursor, encodeCursor, type Page } from '@lib/http';
import type { Filter } from '@lib/read-store';
import { APP_CONFIG, Clock, REQUEST_RETRY_WINDOW_MS, type AppConfig } from '@lib/shared';
import { isInFlight, redelivered, toPublicDelivery, type DeliveryRecord, type DeliveryStatus, type PublicDeliveryRecord, type WebhookEnvelope } from '../domain/delivery';
import { AlreadyInFlight, DeliveryNotFound } from '../domain/delivery.errors';
import { PayloadFinalizerRegistry } from '../registries';
import { DeliverySignal } from './delivery-signal';
import { DeliveryStore } from './delivery-store';

export interface DeliveryListOptions {
  type?: string;
  status?: DeliveryStatus;
  limit: number;
  cursor?: string;
}

export type DeliveryWithPayload = PublicDeliveryRecord & { payload: WebhookEnvelope };

const LIST = 'events';
const REDELIVER_RETRIES = 5;

/** The delivery log as organizations see it (GET /events, GET /events/{id}) and redelivery. */
@Injectable()
export class WebhookDeliveries {
  constructor(
    private readonly store: DeliveryStore,
    private readonly finalizers: PayloadFinalizerRegistry,
    private readonly signal: DeliverySignal,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A record by id, whatever its organization (for extensions such as the pricing loop, which checks `generation`). */
  find(deliveryId: string): Promise<DeliveryRecord | null> {
    return this.store.get(deliveryId);
  }

  /** Newest first, keyset-paged. */
  async list(organizationId: string, options: DeliveryListOptions): Promise<Page<PublicDeliveryRecord>> {
    const listed = { type: options.type, status: options.status };
    const after = decodeCursor(LIST, options.cursor, listed);
    const filter: Filter = { organizationId };
    if (options.type !== undefined) filter.type = options.type;
    if (options.status !== undefined) filter.status = options.status;
    const { items, nextAfter } = await this.store.list(filter, options.limit, after);
    return { data: items.map(toPublicDelivery), nextCursor: nextAfter ? encodeCursor(LIST, nextAfter, listed) : null };
  }

  /** The record with its payload, secret-bearing fields redacted. Another organization's record is not found. */
  async get(organizationId: string, deliveryId: string): Promise<DeliveryWithPayload> {
    const record = await this.owned(organizationId, deliveryId);
    return { ...toPublicDelivery(record), payload: this.finalizers.redact(record.type, record.payload) };
  }

  /**
   * Back into the normal pipeline: fresh budget, next generation (a pricing event gets a new
   * token), same id. 409 `already_in_flight` while pending or processing. `request`: the keyed
   * request's id (idempotentId); its retry after a lost answer finds its redelivery made and
   * answers as the first attempt did, without a second one.
   */
  async redeliver(organizationId: string, deliveryId: string, request?: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const record = await this.owned(organizationId, deliveryId);
      const now = this.clock.now();
      const madeAt = request !== undefined && record.redeliveredBy && Object.hasOwn(record.redeliveredBy, request) ? record.redeliveredBy[request] : null;
      if (madeAt !== null && now - madeAt < REQUEST_RETRY_WINDOW_MS) return;
      if (isInFlight(record)) throw new AlreadyInFlight();
      const schedule = record.fastPath ? this.config.pricingRetryScheduleMs : this.config.webhookRetryScheduleMs;
      // A record stored before a field was redacted loses it with this write.
      const next = redelivered({ ...record, payload: this.finalizers.redact(record.type, record.payload) }, now, schedule, request);
      const stored = await this.store.compareAndSet(record, next);
      if (stored) {
        this.signal.pending(stored);
        return;
      }
      // Someone else wrote the record meanwhile (it cannot be in flight, so rarely); look again.
      if (attempt >= REDELIVER_RETRIES) throw new AlreadyInFlight();
    }
  }

  private async owned(organizationId: string, deliveryId: string): Promise<DeliveryRecord> {
    const record = await this.store.get(deliveryId);
    if (!record || record.organizationId !== organizationId) throw new DeliveryNotFound();
    return record;
  }
}
