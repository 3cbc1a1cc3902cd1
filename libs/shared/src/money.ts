import Decimal from 'decimal.js';
import { ValidationFailed } from './errors';
import { minorUnits } from './minor-units';

export { currencyFormatOptions, minorUnits, STORED_DECIMALS } from './minor-units';

/**
 * Money arithmetic on decimal.js. Amounts travel through the API as JSON numbers but are never
 * added or multiplied as binary floats: every operation here converts to Decimal first and rounds
 * half-up (ties away from zero) to the currency's minor unit.
 *
 * A private Decimal constructor with ample precision keeps products of large quantities, prices
 * and areas exact before the final rounding, without changing decimal.js settings for others.
 */
const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });


/**
 * The ISO 4217 codes a price may be in: those of the runtime's ICU data (full ICU in every Node
 * build), i.e. the currencies in circulation, without the fund, precious-metal and test codes
 * (CLF, XAU, XTS, XXX…) that a quote has no use for.
 */
export const CURRENCY_CODES: readonly string[] = Intl.supportedValuesOf('currency');


/** A finite Decimal with 40 significant digits, for money arithmetic before the final rounding. */
export function moneyDecimal(value: Decimal.Value): Decimal {
  const d = new Money(value);
  if (!d.isFinite()) throw new RangeError(`Not a finite amount: ${String(value)}`);
  return d;
}

/** Rounds half-up to the currency's minor unit: 0.125 EUR → 0.13, 2.5 JPY → 3, -0.125 EUR → -0.13. */
export function roundMoney(value: Decimal.Value, currency: string): Decimal {
  return moneyDecimal(value).toDecimalPlaces(minorUnits(currency), Decimal.ROUND_HALF_UP);
}

/** The JSON number for an already rounded amount (its shortest decimal form equals the Decimal). */
export function toMoneyNumber(d: Decimal): number {
  const n = d.toNumber();
  return Object.is(n, -0) ? 0 : n;
}

/**
 * The most minor units an amount the service computes may have, either side of zero. A decimal of
 * at most 15 significant digits comes back unchanged from a JSON number (an IEEE double); a larger
 * amount could lose its last digits unnoticed, and a subtotal stop being the sum of its lines.
 */
export const MAX_AMOUNT_MINOR_UNITS = 1e15;

/** largestAmount per number of minor-unit digits: every priced line asks, so each is computed once. */
const LARGEST_BY_DIGITS = new Map<number, Decimal>();

/** The largest amount in `currency`: 10000000000000.00 EUR, 1000000000000000 JPY, 1000000000000.000 KWD. */
export function largestAmount(currency: string): Decimal {
  const digits = minorUnits(currency);
  let largest = LARGEST_BY_DIGITS.get(digits);
  if (largest === undefined) LARGEST_BY_DIGITS.set(digits, (largest = new Money(MAX_AMOUNT_MINOR_UNITS).dividedBy(new Money(10).pow(digits))));
  return largest;
}

/** Whether a JSON number holds the amount exactly: at most MAX_AMOUNT_MINOR_UNITS minor units of `currency` from zero. */
export function isRepresentableAmount(amount: Decimal.Value, currency: string): boolean {
  return moneyDecimal(amount).abs().lte(largestAmount(currency));
}

/**
 * A price the service would compute beyond largestAmount: the request is refused (422
 * `validation_error`) before anything is stored, at the field (`path`) that led to it.
 */
export class AmountTooLarge extends ValidationFailed {
  constructor(
    readonly currency: string,
    readonly path: string,
  ) {
    const limit = `the largest amount the service handles in ${currency} (${largestAmount(currency).toFixed(minorUnits(currency))})`;
    super([{ path, message: `the price exceeds ${limit}` }], `The price exceeds ${limit}. Nothing was changed.`);
  }
}

/**
 * The JSON number of a computed, rounded amount in `currency`, or AmountTooLarge at `path` when a
 * JSON number would not hold it exactly. Every amount the service computes and shows comes from here.
 */
export function checkedAmount(amount: Decimal, currency: string, path: string): number {
  if (!isRepresentableAmount(amount, currency)) throw new AmountTooLarge(currency, path);
  return toMoneyNumber(amount);
}

/** quantity × unitPrice, rounded to the minor unit. */
export function lineTotal(quantity: Decimal.Value, unitPrice: Decimal.Value, currency: string): Decimal {
  return roundMoney(moneyDecimal(quantity).times(moneyDecimal(unitPrice)), currency);
}

export interface PricedLine {
  quantity: number;
  unitPrice: number;
}

export interface MoneyTotals {
  subtotal: number;
  taxAmount: number;
  total: number;
}

/**
 * Totals of a breakdown: each line is rounded on its own and the rounded lines are summed, so the
 * subtotal always equals the sum of the line totals a customer sees; tax is rounded once. A total
 * beyond largestAmount is refused at `path`, the request field the breakdown depends on.
 */
export function computeTotals(lineItems: readonly PricedLine[], taxRatePercent: number, currency: string, path = 'lineItems'): MoneyTotals {
  const subtotal = lineItems.reduce(
    (sum, item) => sum.plus(lineTotal(item.quantity, item.unitPrice, currency)),
    new Money(0),
  );
  const taxAmount = roundMoney(subtotal.times(moneyDecimal(taxRatePercent)).dividedBy(100), currency);
  return {
    subtotal: checkedAmount(subtotal, currency, path),
    taxAmount: checkedAmount(taxAmount, currency, path),
    total: checkedAmount(subtotal.plus(taxAmount), currency, path),
  };
}
