import { ApiProperty } from '@nestjs/swagger';
import { FrozenPricingSchema, PricedLineItemSchema, PricingBreakdownSchema } from '@lib/submissions';
import { ConfigurationSchema } from '@lib/templates';
import { SESSION_LOCALES, SESSION_ORIGINS } from '../domain/session.events';

export class SessionPricingSchema {
  @ApiProperty({ enum: ['base', 'external'], description: '`external` when the external system has priced the current configHash' }) source: string;
  @ApiProperty({ type: [PricedLineItemSchema] }) lineItems: PricedLineItemSchema[];
  @ApiProperty() subtotal: number;
  @ApiProperty({ description: 'Live pricing is on and an external price for the current configuration may still arrive' }) awaitingExternal: boolean;
}

/** api-v1 configuration-session object, plus timing. */
export class ConfigurationSessionSchema {
  @ApiProperty() sessionId: string;
  @ApiProperty() organizationId: string;
  @ApiProperty() templateId: string;
  @ApiProperty({ enum: SESSION_ORIGINS }) origin: string;
  @ApiProperty({ enum: ['active', 'submitted', 'expired'] }) status: string;
  @ApiProperty({ type: ConfigurationSchema, nullable: true, description: 'null until the first configuration is saved' }) configuration: ConfigurationSchema | null;
  @ApiProperty({ type: String, nullable: true, example: 'sha256:…' }) configHash: string | null;
  @ApiProperty({ type: String, nullable: true }) submissionId: string | null;
  @ApiProperty({ enum: SESSION_LOCALES }) locale: string;
  @ApiProperty({ type: PricingBreakdownSchema }) basePricing: PricingBreakdownSchema;
  @ApiProperty({ type: FrozenPricingSchema, nullable: true, description: 'The latest external write for the current configHash' }) adjustments: FrozenPricingSchema | null;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) createdAt: number;
  @ApiProperty({ type: 'integer', description: "Unix ms of the customer's last write" }) lastActivityAt: number;
  @ApiProperty({ type: 'integer', description: 'Unix ms after which the session is expired unless written to again' }) expiresAt: number;
}

/** What the customer sees: the configuration-session object plus `pricing` (decisions §6). */
export class StorefrontSessionSchema extends ConfigurationSessionSchema {
  @ApiProperty({ type: SessionPricingSchema }) pricing: SessionPricingSchema;
}

export class StartedSessionSchema {
  @ApiProperty() sessionId: string;
  @ApiProperty({ description: 'Secret of the customer; shown only here. Send it as `Authorization: Bearer <customerToken>`.' }) customerToken: string;
  @ApiProperty({ type: StorefrontSessionSchema }) session: StorefrontSessionSchema;
}

export class SubmittedSessionSchema {
  @ApiProperty() submissionId: string;
}

class StorefrontOrganizationSchema {
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ enum: SESSION_LOCALES }) locale: string;
  @ApiProperty({ enum: ['metric', 'imperial'] }) unitSystem: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
}

class StorefrontTemplateSchema {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: "The template's productCategory" }) productType: string;
}

export class StorefrontSchema {
  @ApiProperty({ type: StorefrontOrganizationSchema }) organization: StorefrontOrganizationSchema;
  @ApiProperty({ type: [StorefrontTemplateSchema], description: 'Alphabetical' }) templates: StorefrontTemplateSchema[];
}
