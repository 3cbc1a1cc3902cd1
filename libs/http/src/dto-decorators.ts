import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import Decimal from 'decimal.js';
import { IsEmail, IsIn, IsNumber, IsString, Matches, Max, MaxLength, Min, ValidateBy, ValidateIf } from 'class-validator';
import { CURRENCY_CODES, stripHtml, toMoneyNumber } from '@lib/shared';

/**
 * Ten times the longest free text any field takes (5,000 characters). A text longer than this is
 * refused by its length limit however much markup it holds, so it is not stripped first: nested
 * entities in a 1 MiB body took 0.7 s of the event loop to strip before their 422 (found by a
 * security review, 2026-11-27).
 */
const STRIPPED_UP_TO = 50_000;

const plain = (value: string) => (value.length > STRIPPED_UP_TO ? value : stripHtml(value));

/** Free text is stored as plain text; length limits apply to what is stored. */
export const PlainText = () => Transform(({ value }) => (typeof value === 'string' ? plain(value) : value));

/** As PlainText; a text that is empty once stripped clears the field (null). */
export const NullablePlainText = () =>
  Transform(({ value }) => {
    if (typeof value !== 'string') return value;
    const text = plain(value);
    return text === '' ? null : text;
  });

/**
 * A phone number as a customer types it on the storefront's forms: digits, spaces, a leading +
 * and ( ) . / -, with at least one digit; blank is no phone. Spaces are spaces: a tab or a line
 * break is refused (until 2026-11-28 `\s` let them in, found by a review). Linear: a lookahead asks for a digit,
 * then one class takes the rest. The form before it (`[…]*[0-9][…]*`, the digit inside the
 * classes around it) backtracked quadratically: 100,000 characters held the event loop for 20 s,
 * before any length check (found by a review, 2026-11-27).
 */
export const PhoneNumber = () => Matches(/^\s*$|^\+?(?=[^0-9]*[0-9])[0-9()./ -]*$/, { message: 'phone may hold digits, spaces, a leading + and ( ) . / -' });

export const Trimmed = () => Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));
/** Trimmed, for each string of an array (a list of e-mail addresses). */
export const TrimmedEach = () => Transform(({ value }) => (Array.isArray(value) ? value.map((each) => (typeof each === 'string' ? each.trim() : each)) : value));

/**
 * An `externalRef` clears with `""` as with `null`: an empty key identifies nothing. Otherwise the
 * value is kept verbatim, never trimmed nor stripped: another system matches it exactly.
 */
export const EmptyClears = () => Transform(({ value }) => (value === '' ? null : value));

/** Present means it must be valid; unlike IsOptional, null is not let through. */
export const IfPresent = () => ValidateIf((_, value) => value !== undefined);

/**
 * Optional, and `null` means absent too: a shape the API reads out with `null` for an unset field
 * can be sent back as it is (docs/decisions/live-pricing.md, docs/decisions/quotes.md).
 */
export const AbsentIfNull = () => applyDecorators(Transform(({ value }) => (value === null ? undefined : value)), IfPresent());

export const IsFiniteNumber = () => IsNumber({ allowNaN: false, allowInfinity: false }, { message: '$property must be a finite number' });

/**
 * Rounds a finite, non-negative number half-up, in decimal, to `decimals` places before the range
 * checks. Clients compute in binary floating point (551.88 × 1.1 is 607.0680000000001, 0.07 × 100
 * is 7.000000000000001): the noise goes, the amount stays (docs/decisions/live-pricing.md).
 * Anything else is left as sent, for the validators to refuse: a non-number, NaN, ±Infinity, and a
 * negative (−1e-9 is not rounded up to 0). Combine with IsFiniteNumber and the range checks.
 */
export const RoundedHalfUp = (decimals: number) =>
  Transform(({ value }) => {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return value;
    return toMoneyNumber(new Decimal(value).toDecimalPlaces(decimals, Decimal.ROUND_HALF_UP));
  });

/**
 * An e-mail address, trimmed, of at most `maxLength` characters; combine with IsDefined (or
 * IfPresent). A value of another kind is told only that it must be a string (the validation
 * pipe's kind rule), not that it is too long or no address.
 */
export const EmailAddress = (maxLength: number) =>
  applyDecorators(Trimmed(), IsString(), IsEmail({}, { message: '$property must be a valid e-mail address' }), MaxLength(maxLength));

/** An upper-case ISO 4217 code of CURRENCY_CODES (docs/decisions/quotes.md); combine with IfPresent where it is optional. */
export const IsCurrencyCode = () => applyDecorators(IsString(), IsIn(CURRENCY_CODES, { message: 'currency must be an ISO 4217 code such as EUR' }));

/**
 * A tax rate in percent, 0..100, optional; rounded half-up to 4 decimals first, so 0.07 × 100
 * (7.000000000000001) is 7. The same rule on quotes and on the organization's quote defaults.
 */
export const TaxRate = () => applyDecorators(RoundedHalfUp(4), IfPresent(), IsFiniteNumber(), Min(0), Max(100));

/** One rule for the items of an array: what an item must pass, and what a failing item is told. */
export type ItemRule = readonly [passes: (item: unknown) => boolean, message: string];

/** The name under which EachItem's rule reaches the validation pipe, with its item rules as context. */
export const EACH_ITEM = 'eachItem';

/** For each failing item of `items`, its index and the message of the first rule it breaks. */
export function itemFailures(items: unknown[], rules: readonly ItemRule[]): Array<{ index: number; message: string }> {
  return items.flatMap((item, index) => {
    const broken = rules.find(([passes]) => !passes(item));
    return broken ? [{ index, message: broken[1] }] : [];
  });
}

/**
 * Rules for each item of an array, each failing item told at its own path (`recipients[1]`: "recipients[1]
 * must be a valid e-mail address"), rather than the array's with no word on which item. Messages
 * are given without the subject, which the validation pipe puts first. Combine with
 * IsArray; a value that is no array is left to it.
 */
export const EachItem = (...rules: ItemRule[]) =>
  ValidateBy(
    {
      name: EACH_ITEM,
      validator: {
        validate: (value: unknown) => !Array.isArray(value) || value.every((item) => rules.every(([passes]) => passes(item))),
        defaultMessage: (args) => `${args?.property ?? 'the value'} has invalid items`,
      },
    },
    { context: { rules } },
  );
