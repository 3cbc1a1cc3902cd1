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

/** Intl separates with non-breaking spaces; the PDF's standard fonts and plain-text mail want plain ones. */
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

export function formatMoney(amount: number, currency: string, locale: DocumentLocale): string {
  return plain(new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amount));
}

export function formatDate(at: number, locale: DocumentLocale): string {
  return plain(new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }).format(at));
}

export function formatNumber(value: number, locale: DocumentLocale): string {
  return plain(new Intl.NumberFormat(locale, { maximumFractionDigits: 3 }).format(value));
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
