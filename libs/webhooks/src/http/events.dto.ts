import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageQuery } from '@lib/http';
import { DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, type DeliveryStatus, type WebhookEventType } from '../domain/delivery';
import { WEBHOOK_EVENT_DATA } from './webhook-event-data.dto';

export class ListEventsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: WEBHOOK_EVENT_TYPES, description: 'Event name as delivered' })
  @IsOptional() @IsIn(WEBHOOK_EVENT_TYPES, { message: `type must be one of: ${WEBHOOK_EVENT_TYPES.join(', ')}` })
  type?: WebhookEventType;

  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional() @IsIn(DELIVERY_STATUSES, { message: `status must be one of: ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;
}

export class DeliveryRecordResponse {
  @ApiProperty({
    example: 'evt_3f9a0c1d5e7b2a4c6d8e0f1a2b3c4d5e',
    description:
      'Delivery id; sent as X-Service-Delivery, the same on retries and redeliveries (tell those apart by `generation`). ' +
      '`webhook-id` is this id for generation 1 and `<id>_g<n>` for generation n ≥ 2.',
  })
  id: string;

  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, description: 'Event name as delivered' })
  type: string;

  @ApiProperty({ enum: ['submission', 'quote', 'lead', 'session'], description: 'Kind of the subject record' })
  entityType: string;

  @ApiProperty({ description: 'Id of the subject record' })
  entityId: string;

  @ApiProperty({ enum: DELIVERY_STATUSES })
  status: DeliveryStatus;

  @ApiProperty({ type: 'integer', description: 'Attempts made (a redelivery starts a fresh budget at 0)' })
  attempts: number;

  @ApiProperty({ type: 'integer', description: 'Retry budget: the length of the retry schedule' })
  maxAttempts: number;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'HTTP 500',
    description:
      'Last delivery failure: `HTTP <status>`, or a transport error class (`timeout`, `connection_refused`, `connection_reset`, `dns_error`, `tls_error`, ' +
      '`host_unreachable`, `blocked_address`, `invalid_url`, `invalid_response`, `network_error`), or a pipeline condition (`no_target_url`, ' +
      '`no_signing_secret`, `payload_too_large`, `internal_error`). Null until an attempt fails.',
  })
  lastError: string | null;

  @ApiProperty({ type: 'integer', description: 'When the next or last attempt was due, Unix ms' })
  scheduledFor: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'First successful delivery, Unix ms' })
  deliveredAt: number | null;

  @ApiProperty({ type: 'integer', description: 'Unix ms' })
  createdAt: number;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description:
      'Sent as X-Service-Delivery-Generation (not signed): 1 for the first delivery, +1 with every redelivery, the same on the retries within one. ' +
      'Signed in `webhook-id` (`<id>_g<n>` from generation 2 on) and, for `pricing.calculated`, as `data.callback.generation`: ' +
      'a redelivery carries a new `callback.url` and the URL of an earlier generation answers 401.',
  })
  generation: number;
}

export class WebhookOrganizationRef {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
}

const EVENT_DATA = Object.entries(WEBHOOK_EVENT_DATA);

// anyOf, not oneOf: several quote events have the same shape (quote.viewed, quote.expiring_soon,
// quote.expired, a logged quote.sent), so their payloads match several schemas and a validator
// would refuse every one of them under oneOf.
@ApiExtraModels(...Object.values(WEBHOOK_EVENT_DATA))
export class WebhookEnvelopeResponse {
  @ApiProperty({ enum: ['1.0'] }) version: string;
  @ApiProperty({ description: 'The delivery id' }) id: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES }) event: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, description: 'Same as `event`' }) eventType: string;
  @ApiProperty({ format: 'date-time', description: 'When the domain event happened, ISO 8601 UTC' }) timestamp: string;
  @ApiProperty({ type: WebhookOrganizationRef }) organization: WebhookOrganizationRef;
  @ApiProperty({ enum: ['en', 'de', 'nl'] }) orgLocale: string;
  @ApiProperty({ type: String, nullable: true }) customerLocale: string | null;
  @ApiProperty({
    anyOf: EVENT_DATA.map(([, schema]) => ({ $ref: getSchemaPath(schema) })),
    description:
      'Event-specific data (decisions §9). `event` tells which schema applies: ' +
      EVENT_DATA.map(([event, schema]) => `\`${event}\` → ${schema.name}`).join(', ') +
      '. Fields may be added to an event: ignore the ones you do not know.',
  })
  data: Record<string, unknown>;
}

export class DeliveryRecordDetailResponse extends DeliveryRecordResponse {
  @ApiProperty({
    type: WebhookEnvelopeResponse,
    description:
      'The delivered body without its capabilities: a pricing event is shown without its `callback` block (capability token), a `quote.sent` without `data.quote.customerUrl` (the customer\'s quote link).',
  })
  payload: WebhookEnvelopeResponse;
}

export class DeliveryPageResponse {
  @ApiProperty({ type: [DeliveryRecordResponse] }) data: DeliveryRecordResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class RedeliveredResponse {
  @ApiProperty({ enum: [true] }) redelivered: true;
}
