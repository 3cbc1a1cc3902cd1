import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean, IsIn, IsNotIn, IsInt, IsNotEmpty, IsObject, IsOptional, IsString, IsUrl, Matches, Max, MaxLength, Min, ValidateIf, ValidateNested,
} from 'class-validator';
import { IfPresent, IsCurrencyCode, PlainText, TaxRate } from '@lib/http';

export const LOCALES = ['en', 'de', 'nl'] as const;
export const UNIT_SYSTEMS = ['metric', 'imperial'] as const;
export const PLANS = ['free', 'essential', 'pro', 'enterprise'] as const;
/** Storefront paths `/storefront/v1/sessions/…` and `/storefront/v1/quotes/…` sit beside `/{orgSlug}`. */
export const RESERVED_SLUGS = ['sessions', 'quotes'];
const URL_OPTIONS = { protocols: ['http', 'https'], require_protocol: true, require_tld: false };

export class QuoteDefaultsDto {
  @ApiPropertyOptional({ description: 'Tax rate in percent', minimum: 0, maximum: 100 })
  @TaxRate()
  taxRate?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 365 })
  @IfPresent() @IsInt() @Min(1) @Max(365)
  validityDays?: number;
}

export class OrganizationSettingsDto {
  @ApiPropertyOptional({ nullable: true, description: 'Receives every webhook event' })
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsUrl(URL_OPTIONS) @MaxLength(2000)
  webhookUrl?: string | null;

  @ApiPropertyOptional({ nullable: true, description: 'Receives pricing.calculated only, instead of webhookUrl' })
  @IsOptional() @ValidateIf((_, v) => v !== null) @IsUrl(URL_OPTIONS) @MaxLength(2000)
  pricingWebhookUrl?: string | null;

  @ApiPropertyOptional() @IfPresent() @IsBoolean()
  externalPricingEnabled?: boolean;

  @ApiPropertyOptional({ minimum: 1000, maximum: 60000, description: 'Customer-facing wait for a live price (callback.timeoutMs)' })
  @IfPresent() @IsInt() @Min(1000) @Max(60000)
  pricingTimeoutMs?: number;

  @ApiPropertyOptional({ type: QuoteDefaultsDto })
  @IfPresent() @IsObject() @ValidateNested() @Type(() => QuoteDefaultsDto)
  quoteDefaults?: QuoteDefaultsDto;
}

export class CreateOrganizationDto {
  @ApiProperty({ maxLength: 200, description: 'HTML is stripped; empty once stripped is refused' }) @PlainText() @IsString() @IsNotEmpty() @MaxLength(200)
  name: string;

  @ApiProperty({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 63 })
  @IsString() @Matches(/^[a-z0-9]+(-[a-z0-9]+)*$/, { message: 'slug must be lowercase letters, digits and single hyphens' }) @MaxLength(63)
  @IsNotIn(RESERVED_SLUGS, { message: 'this slug is reserved' })
  slug: string;

  @ApiPropertyOptional({ enum: LOCALES, default: 'en' }) @IfPresent() @IsIn(LOCALES)
  locale?: (typeof LOCALES)[number];

  @ApiPropertyOptional({ enum: UNIT_SYSTEMS, default: 'metric' }) @IfPresent() @IsIn(UNIT_SYSTEMS)
  unitSystem?: (typeof UNIT_SYSTEMS)[number];

  @ApiPropertyOptional({ description: 'ISO 4217 code', default: 'EUR' }) @IfPresent() @IsCurrencyCode()
  currency?: string;

  @ApiPropertyOptional({ enum: PLANS, default: 'pro' }) @IfPresent() @IsIn(PLANS)
  plan?: (typeof PLANS)[number];

  @ApiPropertyOptional({ type: OrganizationSettingsDto })
  @IfPresent() @IsObject() @ValidateNested() @Type(() => OrganizationSettingsDto)
  settings?: OrganizationSettingsDto;
}

export class UpdateOrganizationDto {
  @ApiPropertyOptional({ maxLength: 200, description: 'HTML is stripped; empty once stripped is refused' }) @PlainText() @IfPresent() @IsString() @IsNotEmpty() @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ enum: LOCALES }) @IfPresent() @IsIn(LOCALES)
  locale?: (typeof LOCALES)[number];

  @ApiPropertyOptional({ enum: UNIT_SYSTEMS }) @IfPresent() @IsIn(UNIT_SYSTEMS)
  unitSystem?: (typeof UNIT_SYSTEMS)[number];

  @ApiPropertyOptional() @IfPresent() @IsCurrencyCode()
  currency?: string;

  @ApiPropertyOptional({ enum: PLANS }) @IfPresent() @IsIn(PLANS)
  plan?: (typeof PLANS)[number];

  @ApiPropertyOptional({ type: OrganizationSettingsDto })
  @IfPresent() @IsObject() @ValidateNested() @Type(() => OrganizationSettingsDto)
  settings?: OrganizationSettingsDto;
}

export class CreateApiKeyDto {
  @ApiProperty({ maxLength: 100, description: 'HTML is stripped; empty once stripped is refused' }) @PlainText() @IsString() @IsNotEmpty() @MaxLength(100)
  name: string;

  @ApiPropertyOptional({ default: false }) @IfPresent() @IsBoolean()
  readOnly?: boolean;
}

// Response shapes, for the OpenAPI document.

/** api-v1 Organization. */
export class OrganizationResponse {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ enum: LOCALES }) locale: string;
  @ApiProperty({ enum: UNIT_SYSTEMS }) unitSystem: string;
  @ApiProperty({ description: 'ISO 4217 code' }) currency: string;
  @ApiProperty({ enum: PLANS }) plan: string;
  @ApiProperty() externalPricingEnabled: boolean;
}

export class QuoteDefaultsResponse {
  @ApiProperty() taxRate: number;
  @ApiProperty({ type: 'integer' }) validityDays: number;
}

export class OrganizationSettingsResponse {
  @ApiProperty({ type: String, nullable: true }) webhookUrl: string | null;
  @ApiProperty({ type: String, nullable: true }) pricingWebhookUrl: string | null;
  @ApiProperty() externalPricingEnabled: boolean;
  @ApiProperty({ type: 'integer' }) pricingTimeoutMs: number;
  @ApiProperty({ type: QuoteDefaultsResponse }) quoteDefaults: QuoteDefaultsResponse;
  @ApiProperty({ description: 'whether a webhook signing secret exists (it is shown only when created)' }) signingSecretConfigured: boolean;
}

/** The admin API's organization: the api-v1 fields, bookkeeping and settings. */
export class AdminOrganizationResponse extends OrganizationResponse {
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) createdAt: number;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) updatedAt: number;
  @ApiProperty({ type: OrganizationSettingsResponse }) settings: OrganizationSettingsResponse;
}

export class UpdatedOrganizationSettingsResponse extends OrganizationSettingsResponse {
  @ApiPropertyOptional({
    description:
      '`whsec_…`: the webhook signing secret this write minted (a creation with live pricing or a webhook URL; a change enabling `externalPricingEnabled`, or setting a first webhook URL, when the organization had no secret). ' +
      'Present only in the answer of the write that minted it and shown nowhere else, never by GET nor in a replay under the same `Idempotency-Key`: keep it now, or rotate with `POST …/signing-secret` to get another.',
  })
  signingSecret?: string;
}

/** The answer of POST and PATCH: the organization, and the signing secret when the write minted one. */
export class UpdatedOrganizationResponse extends AdminOrganizationResponse {
  @ApiProperty({ type: UpdatedOrganizationSettingsResponse }) override settings: UpdatedOrganizationSettingsResponse;
}

export class ApiKeyResponse {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() readOnly: boolean;
  @ApiProperty({ description: 'the first characters of the key, to tell keys apart' }) keyPrefix: string;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) createdAt: number;
}

export class ApiKeyListResponse {
  @ApiProperty({ type: [ApiKeyResponse], description: 'active keys, never their secret' }) data: ApiKeyResponse[];
  @ApiProperty({ type: String, nullable: true, description: 'the next page, or null on the last (an organization has at most 10 active keys)' }) nextCursor: string | null;
}

export class SigningSecretResponse {
  @ApiPropertyOptional({ description: '`whsec_…`, shown only in this response; absent from its replay under the same `Idempotency-Key`' }) secret?: string;
}
