import type { Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { QUOTE_STATUSES } from '@lib/quotes/domain/quote.events';
import { QuoteLineItemView } from '@lib/quotes/http/quote.dto';
import type { PricingContext } from '@lib/sessions/domain/session.events';
import { PricedLineItemSchema, PricingBreakdownSchema } from '@lib/submissions/http/submission.schemas';
import { ConfigurationSchema } from '@lib/templates/http/template.schemas';
import type { WebhookEventType } from '../domain/delivery';

// The `data` of every webhook event as the sources build it (libs/webhooks/src/sources,
// libs/pricing-loop PricingWebhookSource), decisions §9 and docs/decisions/webhooks.md "Event data".
// No schema forbids other fields: new ones may be added to an event without a new version.

const PRICING_CONTEXTS = ['configuration', 'submission', 'autofill'] as const satisfies readonly PricingContext[];

const LINE_ITEMS_OMITTED =
  'Present, and `true`, only where an envelope over the 2 MiB cap was sent without its line items: read them through the API. No event of the product comes near the cap.';

export class WebhookRecordRef {
  @ApiProperty() id: string;
}

export class WebhookQuote {
  @ApiProperty() id: string;
  @ApiProperty({ example: 'Q-2026-000001' }) quoteNumber: string;
  @ApiProperty({ type: 'integer', description: 'The version the event is about' }) version: number;
  @ApiProperty({ enum: QUOTE_STATUSES, description: 'The status the event left the quote in' }) status: string;
  @ApiProperty({ description: 'Total including tax' }) total: number;
  @ApiProperty({ example: 'EUR' }) currency: string;
}

export class WebhookSentQuote extends WebhookQuote {
  @ApiPropertyOptional({
    example: 'https://quotes.example.com/q/3q2-7wEf…',
    description:
      "The customer's quote link, `{PUBLIC_BASE_URL}/q/{quoteToken}`: whoever holds it can view, accept or reject the quote. " +
      'In every delivery attempt; never in the delivery log (`GET /api/v1/events/{id}`).',
  })
  customerUrl?: string;
}

export class WebhookQuoteCustomer {
  @ApiProperty({ type: String, nullable: true }) name: string | null;
  @ApiProperty({ type: String, nullable: true }) email: string | null;
}

/** What every `quote.*` event holds, as it was when the event happened. */
class QuoteEventData {
  @ApiProperty({ type: WebhookQuote }) quote: WebhookQuote;
  @ApiProperty({ type: WebhookQuoteCustomer }) customer: WebhookQuoteCustomer;
  @ApiProperty({ type: WebhookRecordRef, description: 'The submission the quote was made for' }) submission: WebhookRecordRef;
}

@ApiSchema({ description: '`quote.created`: a quote was created (status `draft`), with the line items it was created with.' })
export class QuoteCreatedEventData extends QuoteEventData {
  @ApiPropertyOptional({ type: [QuoteLineItemView], description: 'In order; left out only beside `lineItemsOmitted`' }) lineItems?: QuoteLineItemView[];
  @ApiPropertyOptional({ enum: [true], description: LINE_ITEMS_OMITTED }) lineItemsOmitted?: true;
}

@ApiSchema({ description: '`quote.sent`: the quote was sent to the customer (status `sent`), also on a re-send.' })
export class QuoteSentEventData extends QuoteEventData {
  @ApiProperty({ type: WebhookSentQuote }) override quote: WebhookSentQuote;
}

@ApiSchema({ description: '`quote.viewed`: the customer opened the quote (status `viewed`).' })
export class QuoteViewedEventData extends QuoteEventData {}

export class WebhookQuoteAcceptance {
  @ApiProperty({ type: String, nullable: true, description: 'Who accepted, as the customer gave it' }) name: string | null;
}

@ApiSchema({ description: '`quote.accepted`: the customer accepted the quote (status `accepted`).' })
export class QuoteAcceptedEventData extends QuoteEventData {
  @ApiProperty({ type: WebhookQuoteAcceptance }) acceptance: WebhookQuoteAcceptance;
}

export class WebhookQuoteRejection {
  @ApiProperty({ type: String, nullable: true, description: 'Who rejected, as the customer gave it' }) name: string | null;
  @ApiProperty({ type: String, nullable: true }) reason: string | null;
}

@ApiSchema({ description: '`quote.rejected`: the customer rejected the quote (status `rejected`).' })
export class QuoteRejectedEventData extends QuoteEventData {
  @ApiProperty({ type: WebhookQuoteRejection }) rejection: WebhookQuoteRejection;
}

@ApiSchema({ description: '`quote.expiring_soon`: a sent or viewed quote expires within 3 days (status unchanged, `sent` or `viewed`).' })
export class QuoteExpiringSoonEventData extends QuoteEventData {}

@ApiSchema({ description: '`quote.expired`: a sent or viewed quote passed its `validUntil` unanswered (status `expired`).' })
export class QuoteExpiredEventData extends QuoteEventData {}

export class WebhookSubmission {
  @ApiProperty() id: string;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) createdAt: number;
}

export class WebhookSubmissionCustomer {
  @ApiProperty({ type: String, nullable: true }) name: string | null;
  @ApiProperty({ type: String, nullable: true }) email: string | null;
  @ApiProperty({ type: String, nullable: true }) phone: string | null;
  @ApiProperty({ type: String, nullable: true }) companyName: string | null;
}

export class WebhookTemplateRef {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'As it was when the customer submitted' }) name: string;
  @ApiProperty({ description: 'As it was when the customer submitted' }) slug: string;
}

export class WebhookConfigurationSummary {
  @ApiProperty({ type: 'integer', description: 'mm' }) width: number;
  @ApiProperty({ type: 'integer', description: 'mm' }) height: number;
  @ApiProperty({ type: 'integer', description: 'Number of placed components' }) componentCount: number;
}

export class WebhookBasePricing {
  @ApiProperty({ enum: ['base'], description: "The service's own price: no live-pricing adjustment was frozen at submit" }) source: string;
  @ApiProperty() subtotal: number;
}

export class WebhookExternalPricing {
  @ApiProperty({ enum: ['external'], description: 'A live-pricing adjustment for the submitted configuration was frozen at submit' }) source: string;
  @ApiProperty({ example: 'sha256:…' }) configHash: string;
  @ApiPropertyOptional({ type: [PricedLineItemSchema], description: "The external system's items; left out only beside `lineItemsOmitted`" }) lineItems?: PricedLineItemSchema[];
  @ApiPropertyOptional({ enum: [true], description: LINE_ITEMS_OMITTED }) lineItemsOmitted?: true;
  @ApiProperty() subtotal: number;
}

@ApiSchema({ description: '`submission.created`: a customer submitted a configuration.' })
@ApiExtraModels(WebhookBasePricing, WebhookExternalPricing)
export class SubmissionCreatedEventData {
  @ApiProperty({ type: WebhookSubmission }) submission: WebhookSubmission;
  @ApiProperty({ type: WebhookSubmissionCustomer }) customer: WebhookSubmissionCustomer;
  @ApiProperty({ type: WebhookTemplateRef }) template: WebhookTemplateRef;
  @ApiProperty({ type: WebhookConfigurationSummary }) configuration: WebhookConfigurationSummary;
  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(WebhookBasePricing) }, { $ref: getSchemaPath(WebhookExternalPricing) }],
    description: '`source` tells which',
  })
  pricing: WebhookBasePricing | WebhookExternalPricing;
}

export class WebhookLead {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() email: string;
  @ApiProperty({ type: String, nullable: true }) phone: string | null;
  @ApiProperty({ description: 'Enquiry text' }) message: string;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) createdAt: number;
}

@ApiSchema({ description: '`lead.created`: the public contact form produced a lead. The envelope\'s `customerLocale` is null.' })
export class LeadCreatedEventData {
  @ApiProperty({ type: WebhookLead }) lead: WebhookLead;
}

export class WebhookPricingCallback {
  @ApiProperty({ description: 'PUT target for adjustments: `{PUBLIC_BASE_URL}/api/v1/configuration-sessions/{token}/adjustments`, a capability URL' }) url: string;
  @ApiProperty({ type: 'integer', description: "The customer-facing wait, ms (the organization's pricingTimeoutMs); also the attempt timeout" }) timeoutMs: number;
  @ApiProperty({ type: 'integer', minimum: 1, description: 'The delivery generation the URL was minted for; the URL of a lower generation answers 401' }) generation: number;
}

@ApiSchema({ description: '`pricing.calculated`: live pricing is on and a configuration wants a price.' })
export class PricingCalculatedEventData {
  @ApiProperty({
    enum: PRICING_CONTEXTS,
    description: '`configuration`: a new configHash of an active session; `submission`: a submit that froze no adjustment; `autofill`: an organization user asked to auto-fill a quote',
  })
  context: PricingContext;
  @ApiProperty({ example: 'sha256:…', description: 'The configuration an answer must name' }) configHash: string;
  @ApiProperty({ type: PricingBreakdownSchema, description: "The service's own breakdown; its items can be sent back unchanged" }) basePricing: PricingBreakdownSchema;
  @ApiProperty({ type: ConfigurationSchema }) configuration: ConfigurationSchema;
  @ApiProperty({ type: WebhookRecordRef }) template: WebhookRecordRef;
  @ApiProperty({ type: WebhookRecordRef, description: 'The session the callback URL writes to' }) session: WebhookRecordRef;
  @ApiPropertyOptional({ type: WebhookRecordRef, description: 'Contexts `submission` and `autofill` only' }) submission?: WebhookRecordRef;
  @ApiPropertyOptional({ type: WebhookPricingCallback, description: 'In every delivery attempt; never in the delivery log (`GET /api/v1/events/{id}`)' })
  callback?: WebhookPricingCallback;
}

/** The schema of `data` for each event name. */
export const WEBHOOK_EVENT_DATA = {
  'submission.created': SubmissionCreatedEventData,
  'quote.created': QuoteCreatedEventData,
  'quote.sent': QuoteSentEventData,
  'quote.viewed': QuoteViewedEventData,
  'quote.accepted': QuoteAcceptedEventData,
  'quote.rejected': QuoteRejectedEventData,
  'quote.expiring_soon': QuoteExpiringSoonEventData,
  'quote.expired': QuoteExpiredEventData,
  'lead.created': LeadCreatedEventData,
  'pricing.calculated': PricingCalculatedEventData,
} satisfies Record<WebhookEventType, Type<unknown>>;
