import { Inject, Injectable, Logger } from '@nestjs/common';
import { matches } from '@lib/event-sourcing';
import type { EventFilter, RecordedEvent } from '@lib/event-store';
import type { Reactor } from '@lib/runtime';
import { APP_CONFIG, Clock, type AppConfig } from '@lib/shared';
import {
  deliveryId, ENVELOPE_VERSION, MAX_PAYLOAD_BYTES, retryDelay, withoutLineItems, type DeliveryRecord, type DeliveryTarget, type WebhookEnvelope,
} from '../domain/delivery';
import { targetUrl, type WebhookOrganization } from '../domain/organization-profile';
import { PayloadFinalizerRegistry, WebhookSourceRegistry } from '../registries';
import type { WebhookEventDraft } from '../webhook-sources';
import { DeliverySignal } from './delivery-signal';
import { DeliveryStore } from './delivery-store';
import { WebhookOrganizations } from './webhook-organizations';

/**
 * Turns domain events into delivery records (runs in the outbox, at least once per event). The
 * record id derives from the domain event id and the draft, so seeing an event twice creates
 * nothing new. A record is created only when the organization had a URL for it when the event
 * happened; it is created `pending` (or `failed` with `payload_too_large`), never sent from here.
 */
@Injectable()
export class WebhookDeliveryReactor implements Reactor {
  readonly name = 'webhooks:deliveries';
  /** every event: each source applies its own filter */
  readonly filter: EventFilter = {};
  private readonly logger = new Logger('WebhookDeliveries');

  constructor(
    private readonly sources: WebhookSourceRegistry,
    private readonly finalizers: PayloadFinalizerRegistry,
    private readonly organizations: WebhookOrganizations,
    private readonly store: DeliveryStore,
    private readonly signal: DeliverySignal,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async react(event: RecordedEvent): Promise<void> {
    const drafts: WebhookEventDraft[] = [];
    for (const source of this.sources.all()) {
      if (matches(source.filter, event)) drafts.push(...(await source.toWebhookEvents(event)));
    }
    if (drafts.length === 0) return;
    const records: DeliveryRecord[] = [];
    for (const draft of drafts) {
      const organization = await this.organizations.asOf(draft.organizationId, event.position);
      if (!organization) {
        this.logger.warn(`${draft.type} for unknown organization ${draft.organizationId} (event ${event.id}) skipped`);
        continue;
      }
      const target: DeliveryTarget = draft.fastPath ? 'pricing' : 'webhook';
      if (!targetUrl(organization, target)) continue;
      records.push(this.newRecord(event, draft, organization, target));
    }
    if (records.length === 0) return;
    for (const created of await this.store.createMissing(records)) {
      if (created.status === 'pending') this.signal.pending(created);
    }
  }

  private newRecord(event: RecordedEvent, draft: WebhookEventDraft, organization: WebhookOrganization, target: DeliveryTarget): DeliveryRecord {
    const now = this.clock.now();
    const id = deliveryId(event.id, draft.type, draft.entityId);
    const schedule = draft.fastPath ? this.config.pricingRetryScheduleMs : this.config.webhookRetryScheduleMs;
    const envelope: WebhookEnvelope = {
      version: ENVELOPE_VERSION,
      id,
      event: draft.type,
      eventType: draft.type,
      timestamp: new Date(event.recordedAt).toISOString(),
      organization: { id: organization.id, name: organization.name, slug: organization.slug },
      orgLocale: organization.locale,
      customerLocale: draft.customerLocale,
      data: draft.data,
    };
    const sizeOf = (candidate: WebhookEnvelope) => Buffer.byteLength(JSON.stringify(candidate));
    let payload = this.finalizers.redact(draft.type, envelope);
    let tooLarge = false;
    const bytes = sizeOf(payload);
    if (bytes > MAX_PAYLOAD_BYTES) {
      const reduced = withoutLineItems(payload);
      if (reduced) payload = reduced;
      tooLarge = !reduced || sizeOf(reduced) > MAX_PAYLOAD_BYTES;
      const outcome = tooLarge ? 'recorded as failed (payload_too_large)' : 'sent without its line items';
      this.logger.warn(`${draft.type} ${id} is ${bytes} bytes, over the ${MAX_PAYLOAD_BYTES}-byte cap: ${outcome}`);
    }
    return {
      id,
      type: draft.type,
      entityType: draft.entityType,
      entityId: draft.entityId,
      status: tooLarge ? 'failed' : 'pending',
      attempts: 0,
      maxAttempts: Math.max(1, schedule.length),
      lastError: tooLarge ? 'payload_too_large' : null,
      scheduledFor: now + retryDelay(schedule, 0),
      deliveredAt: null,
      createdAt: now,
      updatedAt: now,
      organizationId: draft.organizationId,
      generation: 1,
      target,
      fastPath: draft.fastPath,
      payload,
      sourceEventId: event.id,
      lastAttemptAt: null,
      leaseUntil: null,
      _rev: 1,
    };
  }
}
