import { fill } from './locale';

/** The localized wording of the validation rules the API reports (422 `details.fields`). */
export interface ValidationTexts {
  atLeast: string;
  atMost: string;
  /** a size the page cannot read as a number (decimals are fine: they are rounded to mm) */
  number: string;
  wholeNumber: string;
  tooWide: string;
  tooTall: string;
  chooseFrom: string;
  onlyOne: string;
  required: string;
  email: string;
  phone: string;
  tooLong: string;
  /** a configuration whose price would have more lines than a price may (pricing.md) */
  tooManyLines: string;
  /** a price beyond the largest amount the service handles (pricing.md) */
  priceTooLarge: string;
}

export interface FieldError {
  path: string;
  message: string;
}

type Rule = [RegExp, (match: RegExpMatchArray, texts: ValidationTexts, size: (mm: number) => string) => string];

/**
 * The API's messages are English sentences built from a few rules (libs/templates field checks,
 * the class-validator DTOs); each known rule is re-worded in the page language, with sizes in the
 * organization's unit. A message no rule matches is shown as the API wrote it.
 */
const RULES: Rule[] = [
  [/^(?:\S+ )?must be at least (\d+) mm$/, (m, t, size) => fill(t.atLeast, { limit: size(Number(m[1])) })],
  [/^(?:\S+ )?must be at most (\d+) mm$/, (m, t, size) => fill(t.atMost, { limit: size(Number(m[1])) })],
  [/^(?:\S+ )?must be at least (\d+)$/, (m, t) => fill(t.atLeast, { limit: m[1] })],
  [/^(?:\S+ )?must be at most (\d+)$/, (m, t) => fill(t.atMost, { limit: m[1] })],
  [/^(?:\S+ )?must be a number$/, (_m, t) => t.number],
  [/^(?:\S+ )?must be a whole number/, (_m, t) => t.wholeNumber],
  [/^the components are (\d+) mm wide together, wider than the product \((\d+) mm\)$/, (m, t, size) => fill(t.tooWide, { total: size(Number(m[1])), width: size(Number(m[2])) })],
  [/^(?:\S+ )?must not exceed the product height \((\d+) mm\)$/, (m, t, size) => fill(t.tooTall, { height: size(Number(m[1])) })],
  [/^needs an option from "(.*)"$/, (m, t) => fill(t.chooseFrom, { group: m[1] })],
  [/^"(.*)" allows only one option/, (m, t) => fill(t.onlyOne, { group: m[1] })],
  [/(^| )(is required|should not be empty|must not be empty)$/, (_m, t) => t.required],
  [/valid e-mail address$/, (_m, t) => t.email],
  [/^phone may hold/, (_m, t) => t.phone],
  [/must be shorter than or equal to (\d+) characters$/, (m, t) => fill(t.tooLong, { max: m[1] })],
  [/^(?:\S+ )?must be at most (\d+) characters$/, (m, t) => fill(t.tooLong, { max: m[1] })],
  [/^this configuration would be priced in (\d+) lines, more than the (\d+) a price may have/, (m, t) => fill(t.tooManyLines, { lines: m[1], max: m[2] })],
  [/^the price exceeds the largest amount/, (_m, t) => t.priceTooLarge],
];

export function localizeFieldMessage(message: string, texts: ValidationTexts, size: (mm: number) => string): string {
  for (const [pattern, word] of RULES) {
    const match = message.match(pattern);
    if (match) return word(match, texts, size);
  }
  return message;
}

/**
 * The field an error belongs to: the path itself when the page has a place for it, else its
 * nearest parent (`components[0].options[1]` → `components[0].options` → `components[0]`), else
 * null (shown above the form).
 */
export function placeFor(path: string, known: (candidate: string) => boolean): string | null {
  let candidate = path;
  for (;;) {
    if (known(candidate)) return candidate;
    const parent = candidate.replace(/(\.[^.[\]]+|\[\d+\])$/, '');
    if (parent === candidate || parent === '') return null;
    candidate = parent;
  }
}

/** `details.fields` of a 422 error envelope, or nothing. */
export function fieldErrorsOf(body: unknown): FieldError[] {
  const fields = (body as { error?: { details?: { fields?: unknown } } } | null)?.error?.details?.fields;
  if (!Array.isArray(fields)) return [];
  return fields.filter((f): f is FieldError => typeof f?.path === 'string' && typeof f?.message === 'string');
}
