import { Transform } from 'class-transformer';
import Decimal from 'decimal.js';
import { ValidateBy, ValidateIf } from 'class-validator';
import { stripHtml } from '@lib/shared';

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
