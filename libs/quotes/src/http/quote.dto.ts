import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { plainToInstance, Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsPositive,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
  isEmail,
} from 'class-validator';
import { AbsentIfNull, EachItem, EmptyClears, ExtraFieldsIgnored, IfPresent, IsCurrencyCode, IsFiniteNumber, NullablePlainText, PageQuery, PlainText, RoundedHalfUp, TaxRate, TrimmedEach } from '@lib/http';
import { ITEM_TYPES } from '@lib/templates';
import { DOCUMENT_LOCALES, type DocumentLocale } from '../documents/document-locale';
import { QUOTE_STATUSES, type QuoteStatus } from '../domain/quote.events';

export const MAX_LINE_ITEMS = 200;
export const MAX_RECIPIENTS = 20;

/** What each recipient of a send must be, each failing one told at its index (`recipients[1]`). */
const RECIPIENT_RULES = [
  [(item: unknown) => typeof item === 'string', 'must be a string'],
  [(item: unknown) => (item as string).length <= 254, 'must be at most 254 characters'],
  [(item: unknown) => isEmail(item), 'must be a valid e-mail address'],
] as const;

/** Decimals kept of a line item's quantity and unit price, and of a tax rate (percent). */
const AMOUNT_DECIMALS = 6;

/** A language tag as clients send it: `de`, `de-DE`, `NL`, `nl_BE`; at most 35 characters, the length RFC 5646 §4.4.1 asks every implementation to support. */
const LANGUAGE_TAG = /^[A-Za-z]{1,8}(?:[-_][A-Za-z0-9]{1,8})*$/;
const MAX_LANGUAGE_TAG = 35;

const ValidityDays = () => applyDecorators(IfPresent(), IsInt(), Min(1), Max(365));
const Currency = () => applyDecorators(IfPresent(), IsCurrencyCode());

/** The fields of a line item that a quote keeps or uses; any other field (e.g. `total`) is ignored. */
const LINE_ITEM_FIELDS = ['description', 'quantity', 'unitPrice', 'itemType', 'itemKey', 'externalRef', 'order', 'sortOffset'] as const;

@ExtraFieldsIgnored()
export class QuoteLineItemDto {
  @ApiProperty({ maxLength: 2000, description: 'HTML is stripped; at most 2000 characters remain.' })
  @PlainText() @IsString() @IsNotEmpty() @MaxLength(2000)
  description: string;

  @ApiProperty({ exclusiveMinimum: true, minimum: 0, maximum: 1_000_000, example: 1, description: 'Rounded half-up to 6 decimals' })
  @RoundedHalfUp(AMOUNT_DECIMALS) @IsFiniteNumber() @IsPositive({ message: 'quantity must be greater than 0' }) @Max(1_000_000)
  quantity: number;

  @ApiProperty({ minimum: 0, maximum: 1_000_000_000, example: 249.5, description: 'Per unit, in the quote currency; rounded half-up to 6 decimals' })
  @RoundedHalfUp(AMOUNT_DECIMALS) @IsFiniteNumber() @Min(0) @Max(1_000_000_000)
  unitPrice: number;

  @ApiPropertyOptional({ enum: ITEM_TYPES, nullable: true, default: 'other', description: 'null: `other`' })
  @AbsentIfNull() @IsIn(ITEM_TYPES)
  itemType?: (typeof ITEM_TYPES)[number];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, description: 'Echoed from base items (`component:<id>:<id>`); preserved. null: none.' })
  @AbsentIfNull() @IsString() @MaxLength(200)
  itemKey?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, description: 'Round-tripped verbatim. null or "": none.' })
  @EmptyClears() @AbsentIfNull() @IsString() @MaxLength(200)
  externalRef?: string;

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'Position; when every item has one, the items are ordered by it. null: none.' })
  @AbsentIfNull() @IsFiniteNumber()
  order?: number;

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'Display order of base items; used like `order` when no item has an `order`. null: none.' })
  @AbsentIfNull() @IsFiniteNumber()
  sortOffset?: number;
}

/**
 * Line items are validated field by field, but fields a quote does not use (`total` of a base
 * item, anything else) are dropped first, and `null` for an optional field means absent: a base
 * breakdown, and a quote's own lines as GET /quotes/{id} shows them, can be sent back unchanged.
 */
const LineItems = () =>
  Transform(({ obj, key }) => {
    const value = (obj as Record<string, unknown>)[key];
    if (!Array.isArray(value)) return value;
    return value.map((item) => {
      // An array where an item belongs would pass as a nested object (its own items are checked, and it has none): null is refused as "must be an object".
      if (Array.isArray(item)) return null;
      if (item === null || typeof item !== 'object') return item;
      const known = Object.fromEntries(LINE_ITEM_FIELDS.filter((f) => f in item).map((f) => [f, (item as Record<string, unknown>)[f]]));
      return plainToInstance(QuoteLineItemDto, known);
    });
  });

const lineItemsProperty: ApiPropertyOptions = {
  type: [QuoteLineItemDto],
  minItems: 1,
  maxItems: MAX_LINE_ITEMS,
  description: 'The whole breakdown, in order. Totals are computed server-side; extra fields such as `total` are ignored.',
};

export class CreateQuoteDto {
  @ApiPropertyOptional({ minimum: 0, maximum: 100, description: "Percent, rounded half-up to 4 decimals. Default: the organization's quoteDefaults.taxRate" })
  @TaxRate()
  taxRate?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 365, description: "Default: the organization's quoteDefaults.validityDays" })
  @ValidityDays()
  validityDays?: number;

  @ApiPropertyOptional({
    example: 'EUR',
    description: "ISO 4217. Default: without `lineItems` (the submission's own lines), the currency the submission was priced in; with `lineItems`, the organization's currency. Amounts are not converted.",
  })
  @Currency()
  currency?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, description: 'HTML is stripped.' })
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(200)
  reference?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 5000, description: 'HTML is stripped.' })
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(5000)
  notes?: string | null;

  @ApiPropertyOptional({
    ...lineItemsProperty,
    description: `${lineItemsProperty.description} Without it: the submission's frozen external pricing when it matches the submitted configuration, else its base pricing.`,
  })
  @IfPresent() @LineItems() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_LINE_ITEMS) @ValidateNested({ each: true })
  lineItems?: QuoteLineItemDto[];
}

export class UpdateQuoteDto {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 5000, description: 'HTML is stripped; null clears it.' })
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(5000)
  notes?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, description: 'HTML is stripped; null clears it.' })
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(200)
  reference?: string | null;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 365, description: 'validUntil is recomputed from sentAt (or createdAt).' })
  @ValidityDays()
  validityDays?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 100, description: 'Percent, rounded half-up to 4 decimals' })
  @TaxRate()
  taxRate?: number;

  @ApiPropertyOptional({ example: 'EUR', description: 'ISO 4217; line totals are re-rounded to its minor unit, amounts are not converted.' })
  @Currency()
  currency?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, description: 'Stored verbatim; null or "" clears it. Allowed in every status, never creates a version.' })
  @EmptyClears() @IsOptional() @IsString() @MaxLength(200)
  externalRef?: string | null;

  @ApiPropertyOptional({ description: 'Required (true) to change terms of a sent or viewed quote: creates the next version as a draft.' })
  @IfPresent() @IsBoolean()
  revise?: boolean;
}

export class ReplaceLineItemsDto {
  @ApiProperty(lineItemsProperty)
  @LineItems() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_LINE_ITEMS) @ValidateNested({ each: true })
  lineItems: QuoteLineItemDto[];

  @ApiPropertyOptional({ description: 'Required (true) on a sent or viewed quote: creates the next version as a draft.' })
  @IfPresent() @IsBoolean()
  revise?: boolean;

  @ApiPropertyOptional({ maxLength: 500, description: 'Shown in the version history. HTML is stripped.' })
  @IfPresent() @PlainText() @IsString() @MaxLength(500)
  changeDescription?: string;
}

export class SendQuoteDto {
  @ApiProperty({ type: [String], format: 'email', minItems: 1, maxItems: MAX_RECIPIENTS, example: ['customer@example.com'] })
  @TrimmedEach() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_RECIPIENTS) @EachItem(...RECIPIENT_RULES)
  recipients: string[];

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: MAX_LANGUAGE_TAG,
    example: 'de-DE',
    description:
      "Language of the e-mail, as a language tag (letters, digits, `-` or `_`): its primary subtag, in any case, picks `en`, `de` or `nl` (`de-DE` → `de`, `NL` → `nl`). Absent, null or another language (`fr`): the customer's locale from the submission (chosen in the storefront session, else the organization's).",
  })
  @AbsentIfNull() @IsString() @MaxLength(MAX_LANGUAGE_TAG) @Matches(LANGUAGE_TAG, { message: 'locale must be a language tag such as de or de-DE' })
  locale?: string;
}

/** The mail language a send asks for: the primary subtag of its tag when the product writes that language, else null (the quote's own locale). */
export function requestedMailLanguage(tag: string | undefined): DocumentLocale | null {
  const language = tag?.split(/[-_]/)[0].toLowerCase();
  return (DOCUMENT_LOCALES as readonly (string | undefined)[]).includes(language) ? (language as DocumentLocale) : null;
}

export class CustomerResponseDto {
  @ApiPropertyOptional({ maxLength: 200, description: 'Who accepts or rejects. HTML is stripped.' })
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(200)
  name?: string | null;

  @ApiPropertyOptional({ maxLength: 2000, description: 'HTML is stripped.' })
  @IsOptional() @NullablePlainText() @IsString() @MaxLength(2000)
  reason?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description:
      'The `version` of the quote view the customer answers. When it is no longer the current version (a later one was sent meanwhile): 409 `quote_not_actionable` and nothing changes. Without it: the current version.',
  })
  // A version beyond the safe integers is read as another number (9007199254740993 as …992).
  @IfPresent() @IsInt() @Min(1) @Max(Number.MAX_SAFE_INTEGER)
  version?: number;
}

export class ListQuotesQuery extends PageQuery {
  @ApiPropertyOptional({ enum: QUOTE_STATUSES })
  @IfPresent() @IsIn(QUOTE_STATUSES)
  status?: QuoteStatus;

  @ApiPropertyOptional()
  // Empty is refused, not read as "no filter": an id sent empty by mistake must not list every quote.
  @IfPresent() @IsString() @IsNotEmpty() @MaxLength(100)
  submissionId?: string;
}

// Response shapes, for the OpenAPI document.

export class QuoteIdResponse {
  @ApiProperty() quoteId: string;
}

export class QuoteVersionResponse {
  @ApiProperty() quoteId: string;
  @ApiProperty({ type: 'integer' }) version: number;
}

export class QuoteLineItemsResponse extends QuoteVersionResponse {
  @ApiProperty() subtotal: number;
  @ApiProperty() taxAmount: number;
  @ApiProperty() total: number;
}

export class QuoteSentResponse {
  @ApiProperty() quoteId: string;
  @ApiProperty({ enum: ['sent'] }) status: string;
  @ApiProperty({ type: 'integer', description: 'Unix ms' }) sentAt: number;
}

export class QuoteLineItemView {
  @ApiProperty() description: string;
  @ApiProperty() quantity: number;
  @ApiProperty() unitPrice: number;
  @ApiProperty({ description: 'quantity × unitPrice, rounded to the currency minor unit' }) total: number;
  @ApiProperty({ enum: ITEM_TYPES }) itemType: string;
  @ApiProperty({ type: 'integer', description: '0-based position' }) order: number;
  @ApiProperty({ type: String, nullable: true }) itemKey: string | null;
  @ApiProperty({ type: String, nullable: true }) externalRef: string | null;
}

export class QuoteListItemView {
  @ApiProperty() id: string;
  @ApiProperty({ example: 'Q-2026-000001', description: 'Per organization and year, gap-free' }) quoteNumber: string;
  @ApiProperty({ type: 'integer', description: 'Starts at 1; +1 on each revision' }) version: number;
  @ApiProperty({ enum: QUOTE_STATUSES }) status: string;
  @ApiProperty() submissionId: string;
  @ApiProperty({ type: String, nullable: true }) reference: string | null;
  @ApiProperty({ type: 'integer', description: 'Unix ms: (sentAt or createdAt) + validityDays' }) validUntil: number;
  @ApiProperty({ type: 'integer' }) validityDays: number;
  @ApiProperty() subtotal: number;
  @ApiProperty() taxAmount: number;
  @ApiProperty() total: number;
  @ApiProperty({ description: 'Percent' }) taxRate: number;
  @ApiProperty() currency: string;
  @ApiProperty({ type: 'integer', nullable: true }) sentAt: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) viewedAt: number | null;
  @ApiProperty({ type: String, nullable: true }) externalRef: string | null;
  @ApiProperty({ type: 'integer' }) createdAt: number;
  @ApiProperty({ type: 'integer' }) updatedAt: number;
}

export class QuoteContentView extends QuoteListItemView {
  @ApiProperty({ type: String, nullable: true }) notes: string | null;
  @ApiProperty({ type: [QuoteLineItemView] }) lineItems: QuoteLineItemView[];
}

export class QuotePdfView {
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['pending', 'generating', 'ready', 'failed'],
    description:
      "The PDF of the quote's current version: `pending` → `generating` → `ready`; `failed` once every retry failed. It is made when a version is created, changes as a draft, and when it is sent. null: this version never had a PDF (quotes older than PDF generation).",
  })
  status: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'uri',
    description:
      'When `ready`: a signed download link `{PUBLIC_BASE_URL}/files/quotes/{id}/v/{version}.pdf?expires=…&signature=…`, valid for 5 minutes (FILE_LINK_TTL_MS). Every read returns a fresh link; fetch the quote again rather than storing it. null otherwise.',
  })
  url: string | null;
}

export class QuoteMailView {
  @ApiProperty({ description: 'the id of the send (the domain event `quote.v1.sent`); not the delivery id of its `quote.sent` webhook, which GET /events lists' }) id: string;
  @ApiProperty({ description: 'the quote version that was sent' }) version: number;
  @ApiProperty({ type: [String] }) recipients: string[];
  @ApiProperty({ enum: ['en', 'de', 'nl'] }) locale: string;
  @ApiProperty() subject: string;
  @ApiProperty({ enum: ['pending', 'sending', 'sent', 'failed'], description: '`failed` once every attempt on MAIL_RETRY_SCHEDULE_MS failed' }) status: string;
  @ApiProperty() attempts: number;
  @ApiProperty() maxAttempts: number;
  @ApiProperty({ type: String, nullable: true, description: 'why the last attempt failed (or what a pending mail waits for)' }) lastError: string | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Unix ms of the next attempt while pending' }) nextAttemptAt: number | null;
  @ApiProperty({ type: Number, nullable: true }) deliveredAt: number | null;
  @ApiProperty({ description: 'the delivered message carried the PDF of the version' }) pdfAttached: boolean;
  @ApiProperty() createdAt: number;
  @ApiProperty() updatedAt: number;
}

export class QuoteMailsPage {
  @ApiProperty({ type: [QuoteMailView] }) data: QuoteMailView[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class QuoteDetailView extends QuoteContentView {
  @ApiProperty({ type: QuotePdfView }) pdf: QuotePdfView;
}

export class QuoteListPage {
  @ApiProperty({ type: [QuoteListItemView] }) data: QuoteListItemView[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class QuoteVersionEntryView {
  @ApiProperty({ type: 'integer' }) version: number;
  @ApiProperty({ type: QuoteContentView, description: 'The quote as it stood in this state' }) snapshot: QuoteContentView;
  @ApiProperty({ type: String, nullable: true, description: 'What started this state; null for the original' }) changeDescription: string | null;
  @ApiProperty({ type: 'integer', description: 'Unix ms when this state started' }) createdAt: number;
}

export class QuoteVersionsPage {
  @ApiProperty({ type: [QuoteVersionEntryView] }) data: QuoteVersionEntryView[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class CustomerLineItemView {
  @ApiProperty() description: string;
  @ApiProperty() quantity: number;
  @ApiProperty() unitPrice: number;
  @ApiProperty() total: number;
  @ApiProperty({ enum: ITEM_TYPES }) itemType: string;
  @ApiProperty() order: number;
}

export class CustomerOrganizationView {
  @ApiProperty() name: string;
}

export class CustomerQuoteView {
  @ApiProperty({ type: CustomerOrganizationView }) organization: CustomerOrganizationView;
  @ApiProperty() quoteNumber: string;
  @ApiProperty({ description: 'The version last sent to the customer' }) version: number;
  @ApiProperty({ enum: QUOTE_STATUSES, description: '`draft` while the organization prepares a new version' }) status: string;
  @ApiProperty({ type: String, nullable: true }) reference: string | null;
  @ApiProperty({ type: String, nullable: true }) notes: string | null;
  @ApiProperty() currency: string;
  @ApiProperty() taxRate: number;
  @ApiProperty({ type: [CustomerLineItemView] }) lineItems: CustomerLineItemView[];
  @ApiProperty() subtotal: number;
  @ApiProperty() taxAmount: number;
  @ApiProperty() total: number;
  @ApiProperty() validityDays: number;
  @ApiProperty() validUntil: number;
  @ApiProperty() sentAt: number;
  @ApiProperty({ type: Number, nullable: true }) viewedAt: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'When the customer accepted or rejected' }) respondedAt: number | null;
}
