/**
 * Sizes are stored as integer millimetres everywhere; an organization on the imperial system
 * shows and takes them in inches with one decimal (mm / 25.4), converted back to whole mm.
 */
export type UnitSystem = 'metric' | 'imperial';

const MM_PER_INCH = 25.4;

export function unitLabel(system: UnitSystem): string {
  return system === 'imperial' ? 'in' : 'mm';
}

/** How one page language writes sizes. */
interface SizeFormats {
  millimetres: Intl.NumberFormat;
  inches: Intl.NumberFormat;
  /** inches in an input field: no grouping */
  inchesInput: Intl.NumberFormat;
  /** `.` or `,`: what the language writes between thousands */
  group: string;
}

const formatsByLocale = new Map<string, SizeFormats>();

/** Built once per language: a size field reads and writes them on every keystroke. */
function sizeFormats(locale: string): SizeFormats {
  let formats = formatsByLocale.get(locale);
  if (!formats) {
    const millimetres = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
    const oneDecimal = { minimumFractionDigits: 1, maximumFractionDigits: 1 };
    formats = {
      millimetres,
      inches: new Intl.NumberFormat(locale, oneDecimal),
      inchesInput: new Intl.NumberFormat(locale, { ...oneDecimal, useGrouping: false }),
      group: millimetres.formatToParts(1000).find((p) => p.type === 'group')?.value ?? '',
    };
    formatsByLocale.set(locale, formats);
  }
  return formats;
}

/**
 * The number to put in an input field for a size: no unit, no grouping, inches with the decimal
 * separator of the page (`47,2` on a Dutch page, as its hints and messages write it).
 */
export function sizeInputValue(mm: number, system: UnitSystem, locale = 'en'): string {
  if (system !== 'imperial') return String(mm);
  return sizeFormats(locale).inchesInput.format(mm / MM_PER_INCH);
}

export interface SizeLimits {
  min: number;
  max: number;
}

export interface SizeReading {
  /** the field's limits in mm */
  limits?: SizeLimits;
  /** the page language: which separator groups thousands */
  locale?: string;
  /** the field's value in mm before this input */
  current?: number | null;
}

/**
 * What the customer typed, as whole millimetres; null when it is not a number. A decimal comma
 * or point is accepted (German and Dutch keyboards, and what a page in another language showed).
 * Millimetres are whole numbers, so there the locale's thousands separator in its place
 * (`1.500` in German and Dutch, `1,500` in English) groups digits: the hints write limits that way.
 *
 * Inches are shown rounded to 0.1 in, so a value typed exactly as a size is shown is taken as
 * that size: a limit (400 mm is shown as 15.7 in, which is 399 mm) is that limit, so the limits
 * the page shows and the API's "must be at least …" answers are values the customer can type and
 * have accepted; and the field's current value shown (a part of 510 mm is 20.1 in, which is
 * 511 mm) keeps its millimetres, so that typing back what "share evenly" showed still fits.
 */
export function parseSizeInput(text: string, system: UnitSystem, reading: SizeReading = {}): number | null {
  const { limits, locale = 'en', current } = reading;
  let trimmed = text.trim();
  const { group } = sizeFormats(locale);
  if (system !== 'imperial' && group && new RegExp(`^\\d{1,3}(\\${group}\\d{3})+$`).test(trimmed)) trimmed = trimmed.split(group).join('');
  const normalized = trimmed.replace(',', '.');
  if (!/^\d+(\.\d+)?$/.test(normalized)) return null;
  const value = Number(normalized);
  if (system !== 'imperial') return Math.round(value);
  const shown = (mm: number) => value === Number(sizeInputValue(mm, system));
  if (current !== undefined && current !== null && shown(current)) return current;
  const mm = Math.round(value * MM_PER_INCH);
  if (limits && mm < limits.min && shown(limits.min)) return limits.min;
  if (limits && mm > limits.max && shown(limits.max)) return limits.max;
  return mm;
}

/** A size for reading: `1,200 mm` or `47.2 in`, formatted for the locale. */
export function formatSize(mm: number, system: UnitSystem, locale: string): string {
  const formats = sizeFormats(locale);
  return system === 'imperial' ? `${formats.inches.format(mm / MM_PER_INCH)} in` : `${formats.millimetres.format(mm)} mm`;
}
