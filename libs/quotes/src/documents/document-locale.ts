import { currencyFormatOptions, STORED_DECIMALS } from '@lib/shared';

/** The languages of the documents the product writes (PDFs, e-mails). */
export const DOCUMENT_LOCALES = ['en', 'de', 'nl'] as const;
export type DocumentLocale = (typeof DOCUMENT_LOCALES)[number];

export type UnitSystem = 'metric' | 'imperial';

/** The first supported locale among the candidates (e.g. customer's, then organization's); else English. */
export function documentLocale(...candidates: Array<string | null | undefined>): DocumentLocale {
  for (const candidate of candidates) {
    const language = candidate?.toLowerCase().split(/[-_]/)[0];
    if (language && (DOCUMENT_LOCALES as readonly string[]).includes(language)) return language as DocumentLocale;
  }
  return 'en';
}

/** Intl separates with non-breaking spaces; plain-text mail and the PDF's line breaking want plain ones. */
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

/** An amount as it is stored: exactly the currency's minor unit (`2.013,15 HUF`, `IQD 1,250.000`, `¥100`). */
export function formatMoney(amount: number, currency: string, locale: DocumentLocale): string {
  return plain(new Intl.NumberFormat(locale, currencyFormatOptions(currency)).format(amount));
}

/** A unit price with every decimal it may be stored with, so `€0.125` is not shown as `€0.13`. */
export function formatUnitPrice(amount: number, currency: string, locale: DocumentLocale): string {
  return plain(new Intl.NumberFormat(locale, currencyFormatOptions(currency, 'unitPrice')).format(amount));
}

/** A quantity (or count) with every decimal it may be stored with: `1.2345` is not shown as `1.235`. */
export function formatQuantity(value: number, locale: DocumentLocale): string {
  return plain(new Intl.NumberFormat(locale, { maximumFractionDigits: STORED_DECIMALS.quantity }).format(value));
}

/** A tax rate in percent with every decimal it may be stored with: `7.6875`. */
export function formatTaxRate(percent: number, locale: DocumentLocale): string {
  return plain(new Intl.NumberFormat(locale, { maximumFractionDigits: STORED_DECIMALS.taxRate }).format(percent));
}

export function formatDate(at: number, locale: DocumentLocale): string {
  return plain(new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }).format(at));
}

/**
 * An instant to the minute, in UTC and saying so: `March 24, 2026 at 2:37 PM UTC`. The seconds are
 * cut off (Intl does not round), so the time shown is never later than the instant.
 */
function formatDateTime(at: number, locale: DocumentLocale): string {
  return `${plain(new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(at))} UTC`;
}

const UNTIL: Record<DocumentLocale, (instant: string) => string> = {
  en: (instant) => `until ${instant}`,
  de: (instant) => `bis ${instant}`,
  nl: (instant) => `tot ${instant}`,
};

/**
 * A quote's expiry as the PDF and the e-mail both word it: `until March 24, 2026 at 2:37 PM UTC`.
 * A quote expires at `validUntil` itself (send + validityDays × 24 h), not at the end of that day,
 * so the time is shown and the wording is "until", never "through" (nl "tot", not "tot en met").
 */
export function formatValidUntil(at: number, locale: DocumentLocale): string {
  return UNTIL[locale](formatDateTime(at, locale));
}

const MM_PER_INCH = 25.4;

/** A stored size (integer mm) as the organization shows sizes: `1200 mm`, or inches with one decimal (`47.2 in`). */
export function formatLength(mm: number, unitSystem: UnitSystem, locale: DocumentLocale): string {
  if (unitSystem === 'imperial') {
    const inches = new Intl.NumberFormat(locale, { minimumFractionDigits: 1, maximumFractionDigits: 1, useGrouping: false }).format(mm / MM_PER_INCH);
    return `${inches} in`;
  }
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: 0, useGrouping: false }).format(mm)} mm`;
}

/** `1200 × 1400 mm` / `47.2 × 55.1 in` */
export function formatSize(width: number, height: number, unitSystem: UnitSystem, locale: DocumentLocale): string {
  const [w] = formatLength(width, unitSystem, locale).split(' ');
  return `${w} × ${formatLength(height, unitSystem, locale)}`;
}
