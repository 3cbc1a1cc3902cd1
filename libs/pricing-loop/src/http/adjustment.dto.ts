import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { plainToInstance, Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsNotEmpty, IsPositive, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { AbsentIfNull, createValidationPipe, EmptyClears, ExtraFieldsIgnored, IfPresent, IsFiniteNumber, PlainText, RoundedHalfUp } from '@lib/http';
import type { ExternalLineInput } from '@lib/submissions';
import { ITEM_TYPES } from '@lib/templates';

/** api-v1 Limits. */
export const MAX_ADJUSTMENT_ITEMS = 200;
export const MAX_DESCRIPTION = 2000;

/**
 * Decimals kept of a quantity or unit price. api-v1 asks only for a number, and partners compute in
 * binary floating point (551.88 × 1.1 is 607.0680000000001): the noise is rounded away (RoundedHalfUp).
 */
const ADJUSTMENT_DECIMALS = 6;

/** One line of the external breakdown (api-v1 Adjustment line item). */
@ExtraFieldsIgnored()
export class AdjustmentLineItemDto {
  @ApiProperty({ maxLength: MAX_DESCRIPTION, description: 'HTML is stripped; at most 2000 characters remain.' })
  @PlainText() @IsString() @IsNotEmpty() @MaxLength(MAX_DESCRIPTION)
  description: string;

  @ApiProperty({ exclusiveMinimum: true, minimum: 0, maximum: 1_000_000, example: 1, description: 'Rounded half-up to 6 decimals' })
  @RoundedHalfUp(ADJUSTMENT_DECIMALS) @IsFiniteNumber() @IsPositive({ message: 'quantity must be greater than 0' }) @Max(1_000_000)
  quantity: number;

  @ApiProperty({ minimum: 0, maximum: 1_000_000_000, example: 249.5, description: 'Per unit, in the organization currency; rounded half-up to 6 decimals' })
  @RoundedHalfUp(ADJUSTMENT_DECIMALS) @IsFiniteNumber() @Min(0) @Max(1_000_000_000)
  unitPrice: number;

  @ApiPropertyOptional({ enum: ITEM_TYPES, default: 'other', nullable: true, description: 'null: the default' })
  @AbsentIfNull() @IsIn(ITEM_TYPES)
  itemType?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, example: 'component:c1:TT', description: 'Echoed from base items; preserved. null: none' })
  @AbsentIfNull() @IsString() @MaxLength(200)
  itemKey?: string;

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'Display order. null: none' })
  @AbsentIfNull() @IsFiniteNumber()
  sortOffset?: number;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200, description: 'Round-tripped verbatim; null or "": none' })
  @EmptyClears() @AbsentIfNull() @IsString() @MaxLength(200)
  externalRef?: string;
}

const LINE_ITEM_FIELDS = ['description', 'quantity', 'unitPrice', 'itemType', 'itemKey', 'sortOffset', 'externalRef'] as const;

/**
 * api-v1: base line items can be sent back unchanged, so a line item's other fields (`total`, …)
 * are dropped before validation instead of being refused as unknown, as they are everywhere else.
 */
const KnownLineItemFields = () =>
  Transform(({ obj, key }) => {
    const value = (obj as Record<string, unknown>)[key];
    // An object where the array belongs is simply "not an array": null, which is told so (validated
    // as a nested object, it would yield errors without a path; dropped, it would be "required").
    if (!Array.isArray(value)) return typeof value === 'object' && value !== null ? null : value;
    return value.map((item) => {
      // An array where an item belongs would pass as a nested object (its own items are checked, and it has none): null is refused as "must be an object".
      if (Array.isArray(item)) return null;
      if (item === null || typeof item !== 'object') return item;
      const known = Object.fromEntries(LINE_ITEM_FIELDS.filter((f) => f in item).map((f) => [f, (item as Record<string, unknown>)[f]]));
      return plainToInstance(AdjustmentLineItemDto, known);
    });
  });

/** PUT /api/v1/configuration-sessions/{token}/adjustments */
export class AdjustmentsDto {
  @ApiProperty({ example: 'sha256:…', description: 'The configHash the breakdown was made for (data.configHash of the event)' })
  @IsString() @IsNotEmpty() @MaxLength(100)
  configHash: string;

  @ApiProperty({
    type: [AdjustmentLineItemDto],
    minItems: 1,
    maxItems: MAX_ADJUSTMENT_ITEMS,
    description: 'The whole breakdown shown for this configHash, in order. Totals are computed server-side; extra fields such as `total` are ignored.',
  })
  @KnownLineItemFields()
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_ADJUSTMENT_ITEMS) @ValidateNested({ each: true })
  lineItems: AdjustmentLineItemDto[];

  /** api-v1: the basePricing object (with `subtotal`) can be sent back as it is; the subtotal is computed server-side. */
  @ApiPropertyOptional({ type: Number, description: 'Ignored: the subtotal is computed server-side from the items' })
  @IfPresent() @IsFiniteNumber()
  subtotal?: number;
}

export interface AdjustmentsBody {
  configHash: string;
  lineItems: ExternalLineInput[];
}

const pipe = createValidationPipe();

/**
 * Validates the body as the global pipe does (422 `validation_error`, paths like
 * `lineItems[3].quantity`), but only when called: the capability checks come first (decisions §8).
 */
export async function parseAdjustmentsBody(body: unknown): Promise<AdjustmentsBody> {
  const dto: AdjustmentsDto = await pipe.transform(body ?? {}, { type: 'body', metatype: AdjustmentsDto });
  return {
    configHash: dto.configHash,
    lineItems: dto.lineItems.map(({ description, quantity, unitPrice, itemType, itemKey, sortOffset, externalRef }) => ({
      description,
      quantity,
      unitPrice,
      ...(itemType !== undefined && { itemType }),
      ...(itemKey !== undefined && { itemKey }),
      ...(sortOffset !== undefined && { sortOffset }),
      ...(externalRef !== undefined && { externalRef }),
    })),
  };
}
