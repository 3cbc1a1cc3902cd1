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

/**
 * What the customer typed, as whole millimetres; null when it is not a number. A decimal comma
 * is accepted (German and Dutch keyboards).
 */
export function parseSizeInput(text: string, system: UnitSystem): number | null {
  const normalized = text.trim().replace(',', '.');
  if (!/^\d+(\.\d+)?$/.test(normalized)) return null;
  const value = Number(normalized);
  return system === 'imperial' ? Math.round(value * MM_PER_INCH) : Math.round(value);
}

/** A size for reading: `1,200 mm` or `47.2 in`, formatted for the locale. */
export function formatSize(mm: number, system: UnitSystem, locale: string): string {
  if (system === 'imperial') {
    const inches = new Intl.NumberFormat(locale, { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(mm / MM_PER_INCH);
    return `${inches} in`;
  }
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(mm)} mm`;
}
