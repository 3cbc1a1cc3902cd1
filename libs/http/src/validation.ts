import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { LruMap, ValidationFailed, type FieldError } from '@lib/shared';

/**
 * Rules about what a value is, the most telling first: when one of them fails, the value's other
 * rules say nothing useful, and the first of them that fails is the field's one message.
 */
const KIND_RULES = ['whitelistValidation', 'isDefined', 'isArray', 'isObject', 'isString', 'isNumber', 'isInt', 'isBoolean', 'isNotEmpty', 'nestedValidation'];

/**
 * What the client is told about one field: that it is missing (a rule failed on no value: only
 * required fields are checked then), else the first rule about its kind that it breaks ("must be
 * a number"), else every rule it breaks. A string where a number belongs is not also told it is
 * too large and negative (2026-11-26, found by two reviews).
 */
function fieldMessages(error: ValidationError, property: string): string[] {
  const rules = error.constraints ?? {};
  const names = Object.keys(rules);
  if (names.length === 0) return [];
  if (error.value === undefined && /^[A-Za-z_]\w*$/.test(property) && !('whitelistValidation' in rules)) return [`${property} is required`];
  const kind = KIND_RULES.find((name) => name in rules);
  return (kind ? [kind] : names).map((name) => rules[name].replace(/^property (\S+) should not exist$/, 'unknown field'));
}

/** class-validator errors as `{ path, message }` with paths like `lineItems[0].quantity`. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    // Errors about the value itself (e.g. an object where an array belongs) have no property.
    const property = typeof error.property === 'string' ? error.property : '';
    const segment = /^\d+$/.test(property) ? `[${property}]` : property;
    const path = !segment ? parent : parent ? (segment.startsWith('[') ? `${parent}${segment}` : `${parent}.${segment}`) : segment.replace(/^\[|\]$/g, '');
    for (const message of fieldMessages(error, property)) out.push({ path, message });
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, path));
  }
  return out;
}

/** How many distinct query strings per query class keep their validated form. */
const QUERIES_KEPT = 1_000;

/**
 * The global pipe, remembering queries it has validated: query classes carry only static rules
 * and pure transforms, so the same query validates to the same values every time, and the
 * requests that repeat one (a CRM polling a list) skip class-transformer and class-validator,
 * about a tenth of such a request's CPU. Bodies are validated every time.
 */
class QueryRememberingValidationPipe extends ValidationPipe {
  private readonly validQueries = new Map<unknown, LruMap<string, object>>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const type = metadata.metatype;
    if (metadata.type !== 'query' || !type || !value || typeof value !== 'object') return super.transform(value, metadata);
    const key = JSON.stringify(value);
    let valid = this.validQueries.get(type);
    const kept = valid?.get(key);
    if (kept) return Object.assign(Object.create(type.prototype as object) as object, kept);
    const result = (await super.transform(value, metadata)) as object;
    if (!valid) this.validQueries.set(type, (valid = new LruMap(QUERIES_KEPT)));
    valid.set(key, { ...result });
    return result;
  }
}

/** Validation at the edge: DTO classes with class-validator; unknown fields are rejected. */
export function createValidationPipe(): ValidationPipe {
  return new QueryRememberingValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transformOptions: { enableImplicitConversion: false },
    // The value is read to tell a missing field from a wrong one (fieldMessages); it is never sent back.
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => new ValidationFailed(flattenValidationErrors(errors)),
  });
}
