import { FieldError, stripHtml } from '@lib/shared';

/**
 * Small readers for untrusted JSON: each checks one value, records a FieldError under its path
 * when the value is wrong, and returns the clean value (or undefined). Validators keep going after
 * an error so that one response lists every problem.
 */
export type JsonObject = Record<string, unknown>;

/** The field a path ends in (`components[0].width` → `width`, `options[1]` → `options[1]`). */
const lastField = (path: string): string => path.slice(path.lastIndexOf('.') + 1);

/** A rule's message that needs its field as subject ("must be a string"), not a sentence of its own. */
const PREDICATE = /^(must |is required$|does not apply )/;

export class FieldErrors {
  readonly list: FieldError[] = [];

  /**
   * Records a refusal. A message that is a bare rule ("must be at least 300 mm", "is required") is
   * given its field as subject ("width must be at least 300 mm"), as the request bodies validated
   * by DTOs word theirs (docs/decisions/platform.md); a sentence is kept as it is.
   */
  add(path: string, message: string): void {
    this.list.push({ path, message: path && PREDICATE.test(message) ? `${lastField(path)} ${message}` : message });
  }

  get empty(): boolean {
    return this.list.length === 0;
  }
}

export const field = (base: string, key: string): string => (base ? `${base}.${key}` : key);
export const item = (base: string, index: number): string => `${base}[${index}]`;

/** Letters, digits, `_`, `-`, `.`; never `:`, which separates the parts of an itemKey. */
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeError(errors: FieldErrors, value: unknown, path: string, expected: string): undefined {
  errors.add(path, value === undefined ? 'is required' : `must be ${expected}`);
  return undefined;
}

/** What a key the body may not hold is told, as by the DTOs' validation. */
export const UNKNOWN_FIELD = 'unknown field';

/** An object whose keys are all in `allowed`; each unknown key is reported at its own path. */
export function readObject(errors: FieldErrors, value: unknown, path: string, allowed: readonly string[]): JsonObject | undefined {
  if (!isObject(value)) return typeError(errors, value, path, 'an object');
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) errors.add(field(path, key), UNKNOWN_FIELD);
  }
  return value;
}

export function readArray(errors: FieldErrors, value: unknown, path: string, max: number): unknown[] | undefined {
  if (!Array.isArray(value)) return typeError(errors, value, path, 'an array');
  if (value.length > max) {
    errors.add(path, `must hold at most ${max} entries`);
    return undefined;
  }
  return value;
}

/** Free text reduced to plain text (HTML stripped, trimmed), then length-checked. */
export function readText(
  errors: FieldErrors,
  value: unknown,
  path: string,
  max: number,
  { allowEmpty = false } = {},
): string | undefined {
  if (typeof value !== 'string') return typeError(errors, value, path, 'a string');
  // Ten times the limit is too long however much markup it holds: refused unstripped, as the DTOs
  // do (dto-decorators.ts), since stripping a hostile 1 MB text held the process for seconds (a review).
  if (value.length > 10 * max) {
    errors.add(path, `must be at most ${max} characters`);
    return undefined;
  }
  const text = stripHtml(value);
  if (!allowEmpty && text === '') {
    errors.add(path, 'must not be empty');
    return undefined;
  }
  // Counted in characters (code points), as the DTOs' MaxLength and JSON Schema's maxLength count.
  if (text.length > max && [...text].length > max) {
    errors.add(path, `must be at most ${max} characters`);
    return undefined;
  }
  return text;
}

export function readIdentifier(errors: FieldErrors, value: unknown, path: string): string | undefined {
  if (typeof value !== 'string') return typeError(errors, value, path, 'a string');
  if (!IDENTIFIER.test(value)) {
    errors.add(path, 'must be 1 to 64 letters, digits, "_", "-" or ".", starting with a letter or digit');
    return undefined;
  }
  return value;
}

export function readInteger(errors: FieldErrors, value: unknown, path: string, min: number, max: number, unit = ''): number | undefined {
  const suffix = unit ? ` ${unit}` : '';
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    return typeError(errors, value, path, unit === 'mm' ? 'a whole number of millimetres' : 'a whole number');
  }
  if (value < min) {
    errors.add(path, `must be at least ${min}${suffix}`);
    return undefined;
  }
  if (value > max) {
    errors.add(path, `must be at most ${max}${suffix}`);
    return undefined;
  }
  return value;
}

/** A finite, non-negative JSON number up to `max` (money amounts, rates, percentages). */
export function readAmount(errors: FieldErrors, value: unknown, path: string, max: number): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return typeError(errors, value, path, 'a finite number');
  if (value < 0) {
    errors.add(path, 'must be at least 0');
    return undefined;
  }
  if (value > max) {
    errors.add(path, `must be at most ${max}`);
    return undefined;
  }
  return value;
}

export function readBoolean(errors: FieldErrors, value: unknown, path: string): boolean | undefined {
  if (typeof value !== 'boolean') return typeError(errors, value, path, 'true or false');
  return value;
}

export function readChoice<T extends string>(errors: FieldErrors, value: unknown, path: string, allowed: readonly T[]): T | undefined {
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    return typeError(errors, value, path, `one of ${allowed.map((a) => `"${a}"`).join(', ')}`);
  }
  return value as T;
}

/** Reports every id that an earlier entry of the same list already uses. */
export function checkUnique(errors: FieldErrors, ids: ReadonlyArray<string | undefined>, path: (index: number) => string): void {
  const firstAt = new Map<string, number>();
  ids.forEach((id, index) => {
    if (id === undefined) return;
    const first = firstAt.get(id);
    if (first === undefined) firstAt.set(id, index);
    else errors.add(path(index), `"${id}" is already used at index ${first}`);
  });
}

/** Plain code-unit ordering, independent of locale, so sorted ids are the same on every machine. */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
