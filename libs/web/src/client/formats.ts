import { minorUnits } from '../../../shared/src/minor-units';
import type { Locale } from './locale';

/**
 * Amounts as they are stored: exactly the currency's minor unit, as the PDF and the e-mail show
 * them. Intl's own default differs for some currencies (none for HUF, COP, IDR…), which would show
 * lines that do not add up to the total.
 */
export function moneyFormat(locale: Locale, currency: string): Intl.NumberFormat {
  const digits = minorUnits(currency);
  return new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A unit price: at least the minor unit and every decimal it may be stored with (6), so €0.125 is not shown as €0.13. */
export function unitPriceFormat(locale: Locale, currency: string): Intl.NumberFormat {
  const digits = minorUnits(currency);
  return new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: Math.max(digits, 6) });
}

export function dateFormat(locale: Locale): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long' });
}

/** A moment to the minute in the reader's own time zone: a quote expires at the time of day it was sent, not at midnight. */
export function dateTimeFormat(locale: Locale): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short' });
}
