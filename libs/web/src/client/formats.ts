import { currencyFormatOptions, STORED_DECIMALS } from '../../../shared/src/minor-units';
import type { Locale } from './locale';

/** Amounts as they are stored and as the PDF prints them: exactly the currency's minor unit. */
export function moneyFormat(locale: Locale, currency: string): Intl.NumberFormat {
  return new Intl.NumberFormat(locale, currencyFormatOptions(currency));
}

/** A unit price with every decimal it may be stored with, so €0.125 is not shown as €0.13. */
export function unitPriceFormat(locale: Locale, currency: string): Intl.NumberFormat {
  return new Intl.NumberFormat(locale, currencyFormatOptions(currency, 'unitPrice'));
}

/** Quantities with every decimal they may be stored with. */
export function quantityFormat(locale: Locale): Intl.NumberFormat {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: STORED_DECIMALS.quantity });
}

/** Tax rates with every decimal they may be stored with. */
export function taxRateFormat(locale: Locale): Intl.NumberFormat {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: STORED_DECIMALS.taxRate });
}

export function dateFormat(locale: Locale): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long' });
}

/**
 * A moment to the minute in the reader's own time zone, named (`… 12:57 CET`): a quote expires at
 * the time of day it was sent, not at midnight, and the PDF says the same moment in UTC.
 */
export function dateTimeFormat(locale: Locale): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'long', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
}
