import { Controller, Get, HttpCode, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ApiErrors, ApiKeyGuard, CurrentCaller, idempotentId, NoBody, pageLimit, type ApiCaller, type Page } from '@lib/http';
import type { PublicDeliveryRecord } from '../domain/delivery';
import { WebhookDeliveries, type DeliveryWithPayload } from '../application/webhook-deliveries';
import { DeliveryPageResponse, DeliveryRecordDetailResponse, ListEventsQuery, RedeliveredResponse } from './events.dto';

/** The webhook delivery log of the calling organization (api-v1 Events). */
@ApiTags('events')
@ApiBearerAuth('apiKey')
@UseGuards(ApiKeyGuard)
@Controller('api/v1/events')
export class EventsController {
  constructor(private readonly deliveries: WebhookDeliveries) {}

  @Get()
  @ApiOperation({
    summary: 'List webhook deliveries, newest first',
    description:
      'Filter by event `type` and delivery `status`; keyset-paged with `cursor`.\n\n' +
      'Each delivery is a POST of the JSON envelope with the headers `X-Service-Event`, `X-Service-Delivery` (the delivery `id`, the same on retries and redeliveries), ' +
      '`X-Service-Delivery-Generation` (1 for the first delivery, +1 with every redelivery, the same on the retries within one; not signed), ' +
      '`X-Service-Signature`, and `webhook-id`, `webhook-timestamp`, `webhook-signature` (Standard Webhooks). ' +
      '`webhook-id` is the delivery `id` for generation 1 and `<id>_g<n>` for generation n ≥ 2, and `webhook-signature` signs it.\n\n' +
      'A redelivered `pricing.calculated` carries a new `data.callback.url` and the URL it replaces answers 401, so it must not be dropped as a duplicate. ' +
      'Deduplicate on signed values only: with Standard Webhooks tooling on `webhook-id`; otherwise on `X-Service-Delivery`, ' +
      'together with the signed `data.callback.generation` for `pricing.calculated`. `X-Service-Delivery-Generation` is a hint, not a key: it is not signed.\n\n' +
      'Deliveries are not ordered: each is retried on its own schedule, so a retry of `quote.created` may arrive after the same quote\'s `quote.sent`. ' +
      'Order by the envelope `timestamp` (when the event happened) and the data (`quote.version`, `quote.status`), or read the current state through the API.\n\n' +
      'An envelope is at most 2 MiB, twice the largest request body the API takes, so every event is delivered whole: a quote of 200 line items of 2,000 characters ' +
      'makes a `quote.created` of up to about 1 MiB, and receivers must accept bodies that large. An envelope over the cap would be delivered without its `lineItems` arrays ' +
      '(`lineItemsOmitted: true` beside where each was, the items read through `GET /quotes/{id}` or `GET /submissions/{id}`); no event of the product comes near it.',
  })
  @ApiOkResponse({ type: DeliveryPageResponse })
  @ApiErrors('unauthorized', 'forbidden_plan', 'validation_error')
  list(@CurrentCaller() caller: ApiCaller, @Query() query: ListEventsQuery): Promise<Page<PublicDeliveryRecord>> {
    return this.deliveries.list(caller.organizationId, { type: query.type, status: query.status, limit: pageLimit(query), cursor: query.cursor });
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a delivery with its payload', description: 'Capabilities are never part of the stored or returned payload: neither the `callback` block of `pricing.calculated` (capability token) nor `data.quote.customerUrl` of `quote.sent` (the customer\'s quote link). Both are added to each delivery attempt only.' })
  @ApiOkResponse({ type: DeliveryRecordDetailResponse })
  @ApiErrors('unauthorized', 'forbidden_plan', 'not_found')
  get(@CurrentCaller() caller: ApiCaller, @Param('id') id: string): Promise<DeliveryWithPayload> {
    return this.deliveries.get(caller.organizationId, id);
  }

  @Post(':id/redeliver')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send a delivered or failed event again',
    description:
      'Re-enqueues the delivery into the normal pipeline with a fresh retry budget, the same id (X-Service-Delivery) and the next `generation` ' +
      '(X-Service-Delivery-Generation, and signed in `webhook-id` as `<id>_g<n>`). ' +
      'A redelivered `pricing.calculated` carries a new capability URL in `data.callback.url` (with `data.callback.generation`) and the previous one stops working (401): ' +
      'receivers deduplicate on `webhook-id`, or on X-Service-Delivery with `data.callback.generation`, ' +
      'so they keep the redelivery and drop only retries of a generation they already have. 409 `already_in_flight` while the delivery is pending or processing. ' +
      'A retry with the same `Idempotency-Key` whose first answer was lost (within 24 h) is answered 200 and makes no second redelivery.',
  })
  @ApiOkResponse({ type: RedeliveredResponse })
  @ApiErrors('unauthorized', 'forbidden_plan', 'read_only_key', 'not_found', 'already_in_flight')
  async redeliver(@CurrentCaller() caller: ApiCaller, @Param('id') id: string, @NoBody() _body: undefined, @Req() request: FastifyRequest): Promise<RedeliveredResponse> {
    await this.deliveries.redeliver(caller.organizationId, id, idempotentId(request, 'redeliver'));
    return { redelivered: true };
  }
}
