import Decimal from 'decimal.js';
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
 * subtotal always equals the sum of the line totals a customer sees; tax is rounded once.
 */
export function computeTotals(lineItems: readonly PricedLine[], taxRatePercent: number, currency: string): MoneyTotals {
  const subtotal = lineItems.reduce(
    (sum, item) => sum.plus(lineTotal(item.quantity, item.unitPrice, currency)),
    new Money(0),
  );
  const taxAmount = roundMoney(subtotal.times(moneyDecimal(taxRatePercent)).dividedBy(100), currency);
  return {
    subtotal: toMoneyNumber(subtotal),
    taxAmount: toMoneyNumber(taxAmount),
    total: toMoneyNumber(subtotal.plus(taxAmount)),
  };
}
