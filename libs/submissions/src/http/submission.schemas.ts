import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ConfigurationSchema } from '@lib/templates';
import { SUBMISSION_STATUSES } from '../domain/submission.events';

export class CustomerSchema {
  @ApiProperty({ type: String, nullable: true }) name: string | null;
  @ApiProperty({ type: String, nullable: true }) email: string | null;
  @ApiProperty({ type: String, nullable: true }) phone: string | null;
  @ApiProperty({ type: String, nullable: true }) companyName: string | null;
  @ApiProperty({ type: String, nullable: true }) address: string | null;
  @ApiProperty({ type: String, nullable: true }) postalCode: string | null;
  @ApiProperty({ type: String, nullable: true }) city: string | null;
  @ApiProperty({ type: String, nullable: true }) country: string | null;
}

export class PricedLineItemSchema {
  @ApiProperty() description: string;
  @ApiProperty() quantity: number;
  @ApiProperty() unitPrice: number;
  @ApiProperty({ description: 'quantity × unitPrice, rounded to the currency minor unit' }) total: number;
  @ApiProperty({ enum: ['window', 'door', 'panel', 'separator', 'labor', 'material', 'other'] }) itemType: string;
  @ApiPropertyOptional({ example: 'component:c1:TT' }) itemKey?: string;
  @ApiPropertyOptional() sortOffset?: number;
  @ApiPropertyOptional() externalRef?: string;
}

export class PricingBreakdownSchema {
  @ApiProperty({ type: [PricedLineItemSchema] }) lineItems: PricedLineItemSchema[];
  @ApiProperty() subtotal: number;
}

export class FrozenPricingSchema extends PricingBreakdownSchema {
  @ApiProperty({ example: 'sha256:…' }) configHash: string;
  @ApiProperty({ description: 'Unix ms' }) receivedAt: number;
}

export class DimensionsSchema {
  @ApiProperty({ description: 'mm' }) width: number;
  @ApiProperty({ description: 'mm' }) height: number;
}

export class SubmissionListItem {
  @ApiProperty() id: string;
  @ApiProperty() templateId: string;
  @ApiProperty({ enum: SUBMISSION_STATUSES }) status: string;
  @ApiProperty({ type: CustomerSchema }) customer: CustomerSchema;
  @ApiProperty({ type: DimensionsSchema }) dimensions: DimensionsSchema;
  @ApiProperty({ type: 'integer' }) unitAmount: number;
  @ApiProperty() locale: string;
  @ApiProperty({ type: String, nullable: true, maxLength: 200 }) externalRef: string | null;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) createdAt: number;
}

export class SubmissionPage {
  @ApiProperty({ type: [SubmissionListItem] }) data: SubmissionListItem[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

class ResolvedOptionSchema {
  @ApiProperty() code: string;
  @ApiProperty() name: string;
}

class ResolvedComponentOptionSchema extends ResolvedOptionSchema {
  @ApiProperty({ description: 'Name of the option group' }) optionGroup: string;
}

class ResolvedComponentSelectionSchema {
  @ApiProperty() componentName: string;
  @ApiProperty() componentType: string;
  @ApiProperty({ description: 'mm' }) width: number;
  @ApiProperty({ description: 'mm' }) height: number;
  @ApiProperty({ type: [ResolvedComponentOptionSchema] }) selectedOptions: ResolvedComponentOptionSchema[];
}

class ResolvedColorSchema {
  @ApiProperty() name: string;
}

export class ResolvedConfigurationSchema {
  @ApiProperty({ type: [ResolvedComponentSelectionSchema] }) componentSelections: ResolvedComponentSelectionSchema[];
  @ApiProperty({ type: [ResolvedOptionSchema] }) selectedOptions: ResolvedOptionSchema[];
  @ApiProperty({ type: ResolvedColorSchema, nullable: true }) insideColor: ResolvedColorSchema | null;
  @ApiProperty({ type: ResolvedColorSchema, nullable: true }) outsideColor: ResolvedColorSchema | null;
  @ApiProperty() notes: string;
  @ApiProperty({ type: String, nullable: true }) selectedSection: string | null;
}

export class SubmissionDetail extends SubmissionListItem {
  @ApiProperty({ type: ConfigurationSchema }) configuration: ConfigurationSchema;
  @ApiProperty({ type: ResolvedConfigurationSchema, description: 'The choices in words, as named when the customer submitted' })
  resolvedConfiguration: ResolvedConfigurationSchema;
  @ApiProperty({ type: FrozenPricingSchema, nullable: true, description: 'Live-pricing adjustment frozen at submit time (same configHash)' })
  externalPricing: FrozenPricingSchema | null;
  @ApiProperty({ type: String, nullable: true, description: 'The newest quote of this submission' }) latestQuoteId: string | null;
  @ApiProperty() configHash: string;
  @ApiProperty({ type: PricingBreakdownSchema, description: "The service's own breakdown at submit time" }) basePricing: PricingBreakdownSchema;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'EUR',
    description: "The currency of `basePricing` and `externalPricing`: the organization's when the customer submitted; a quote of the submission's own lines takes it. null for submissions made before the service recorded it.",
  })
  currency: string | null;
  @ApiProperty({ enum: ['storefront', 'embed', 'org_customize'] }) origin: string;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) updatedAt: number;
}
