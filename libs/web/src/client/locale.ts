/** The languages every page speaks; the shell picks one (decisions: docs/decisions/customer-pages.md). */
export const LOCALES = ['en', 'de', 'nl'] as const;
export type Locale = (typeof LOCALES)[number];

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** A message catalog: English defines the keys, the other languages must have every one of them. */
export type Catalog<T extends Record<string, string>> = { en: T } & Record<Exclude<Locale, 'en'>, { [K in keyof T]: string }>;

/** Fills `{name}` placeholders; unknown placeholders stay visible so a gap is noticed. */
export function fill(template: string, values: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => (key in values ? String(values[key]) : whole));
}

export const LANGUAGE_NAMES: Record<Locale, string> = { en: 'English', de: 'Deutsch', nl: 'Nederlands' };
