/**
 * The currencies' minor units, without dependencies: the server's money arithmetic and the
 * customer pages' script (bundled on its own) show and round amounts to the same places.
 */

/** ISO 4217 currencies whose minor unit is not 2 (all others use 2). */
const MINOR_UNIT_EXCEPTIONS: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0,
  UGX: 0, UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

/** Number of decimal places of the currency's minor unit (JPY 0, EUR 2, KWD 3). */
export function minorUnits(currency: string): number {
  return MINOR_UNIT_EXCEPTIONS[currency.trim().toUpperCase()] ?? 2;
}

/** The most decimals a quantity, a unit price or a tax rate is stored with (line items, quote terms). */
export const STORED_DECIMALS = { quantity: 6, unitPrice: 6, taxRate: 4 } as const;

/**
 * Intl's currency options that show an amount as it is stored: exactly the minor unit, or for a
 * unit price at least the minor unit and every decimal it may have. Intl's own default differs
 * for some currencies (none for HUF, COP, IDR…), which would print lines that do not add up. The
 * PDF, the e-mail and the customer pages all format with these.
 */
export function currencyFormatOptions(currency: string, kind: 'amount' | 'unitPrice' = 'amount'): Intl.NumberFormatOptions {
  const digits = minorUnits(currency);
  return { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: kind === 'amount' ? digits : Math.max(digits, STORED_DECIMALS.unitPrice) };
}
