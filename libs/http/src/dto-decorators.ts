import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import Decimal from 'decimal.js';
import { IsIn, IsString, ValidateBy, ValidateIf } from 'class-validator';
import { CURRENCY_CODES, stripHtml } from '@lib/shared';

/** Free text is stored as plain text; length limits apply to what is stored. */
export const PlainText = () => Transform(({ value }) => (typeof value === 'string' ? stripHtml(value) : value));

/** As PlainText; a text that is empty once stripped clears the field (null). */
export const NullablePlainText = () =>
  Transform(({ value }) => {
    if (typeof value !== 'string') return value;
    const text = stripHtml(value);
    return text === '' ? null : text;
  });

export const Trimmed = () => Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

/** Present means it must be valid; unlike IsOptional, null is not let through. */
export const IfPresent = () => ValidateIf((_, value) => value !== undefined);

/** An upper-case ISO 4217 code of CURRENCY_CODES (docs/decisions/quotes.md); combine with IfPresent where it is optional. */
export const IsCurrencyCode = () => applyDecorators(IsString(), IsIn(CURRENCY_CODES, { message: 'currency must be an ISO 4217 code such as EUR' }));

/**
 * A finite JSON number with at most `maxDecimalPlaces` decimals. Counts decimals exactly (also for
 * numbers printed in exponent form, such as 5e-324, where class-validator's own check throws).
 */
export const IsDecimalNumber = (maxDecimalPlaces: number) =>
  ValidateBy({
    name: 'isDecimalNumber',
    validator: {
      validate: (value: unknown) => typeof value === 'number' && Number.isFinite(value) && new Decimal(value).decimalPlaces() <= maxDecimalPlaces,
      defaultMessage: (args) => `${args?.property} must be a number with at most ${maxDecimalPlaces} decimal places`,
    },
  });
