/**
 * Sizes are stored as integer millimetres everywhere; an organization on the imperial system
 * shows and takes them in inches with one decimal (mm / 25.4), converted back to whole mm.
 */
export type UnitSystem = 'metric' | 'imperial';

const MM_PER_INCH = 25.4;

export function unitLabel(system: UnitSystem): string {
  return system === 'imperial' ? 'in' : 'mm';
}

/** The number to put in an input field for a size (no unit, no grouping). */
export function sizeInputValue(mm: number, system: UnitSystem): string {
  return system === 'imperial' ? (Math.round((mm / MM_PER_INCH) * 10) / 10).toFixed(1) : String(mm);
}

export interface SizeLimits {
  min: number;
  max: number;
}

/**
 * What the customer typed, as whole millimetres; null when it is not a number. A decimal comma
 * is accepted (German and Dutch keyboards).
 *
 * A limit in inches is shown rounded to 0.1 in (400 mm as 15.7 in, which is 399 mm), so a value
 * typed exactly as a limit is shown is taken as that limit: the limits the page shows, and the
 * API's "must be at least …" answers, are values the customer can type and have accepted.
 */
export function parseSizeInput(text: string, system: UnitSystem, limits?: SizeLimits): number | null {
  const normalized = text.trim().replace(',', '.');
  if (!/^\d+(\.\d+)?$/.test(normalized)) return null;
  const value = Number(normalized);
  if (system !== 'imperial') return Math.round(value);
  const mm = Math.round(value * MM_PER_INCH);
  if (limits && mm < limits.min && value === Number(sizeInputValue(limits.min, system))) return limits.min;
  if (limits && mm > limits.max && value === Number(sizeInputValue(limits.max, system))) return limits.max;
  return mm;
}

/** A size for reading: `1,200 mm` or `47.2 in`, formatted for the locale. */
export function formatSize(mm: number, system: UnitSystem, locale: string): string {
  if (system === 'imperial') {
    const inches = new Intl.NumberFormat(locale, { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(mm / MM_PER_INCH);
    return `${inches} in`;
  }
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(mm)} mm`;
}
