import { Body, ValidationPipe, type ArgumentMetadata, type PipeTransform, type ValidationError } from '@nestjs/common';
import { LruMap, ValidationFailed, type FieldError } from '@lib/shared';
import { childPath } from './body-depth';
import { EACH_ITEM, itemFailures, type ItemRule } from './dto-decorators';

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
  return (kind ? [kind] : names).map((name) =>
    rules[name]
      .replace(/^property (\S+) should not exist$/, 'unknown field')
      // said of an item that is not an object (arrays are turned away before, as null: LineItems)
      .replace(/^each value in nested property \S+ must be either object or array$/, 'must be an object'),
  );
}

/**
 * class-validator errors as `{ path, message }` with paths like `lineItems[0].quantity`. Pushed
 * into one list, never spread into a call: a body of 130,000 array items overflowed the stack as
 * `push(...errors)` (a 500, found by a review, 2026-11-27).
 */
export function flattenValidationErrors(errors: ValidationError[], parent = '', out: FieldError[] = []): FieldError[] {
  for (const error of errors) {
    // Errors about the value itself (e.g. an object where an array belongs) have no property.
    const property = typeof error.property === 'string' ? error.property : '';
    const index = /^\d+$/.test(property);
    // A top-level index stays bare ("0"); a property is never cut, even one named `limit[]` (a query).
    const path = !property ? parent : !parent ? property : index ? `${parent}[${property}]` : `${parent}.${property}`;
    for (const message of fieldMessages(error, property)) {
      const itemRules = error.constraints?.[EACH_ITEM] === message ? (error.contexts?.[EACH_ITEM] as { rules?: readonly ItemRule[] } | undefined)?.rules : undefined;
      if (!itemRules || !Array.isArray(error.value)) out.push({ path, message });
      else for (const failure of itemFailures(error.value, itemRules)) out.push({ path: `${path}[${failure.index}]`, message: `${path}[${failure.index}] ${failure.message}` });
    }
    // An array where an object belongs is told so, and its items are not: class-validator checks
    // them as if they were the object's fields (`customer[0].name is required`, a review).
    if (error.children?.length && !arrayForObject(error)) flattenValidationErrors(error.children, path, out);
  }
  return out;
}

const arrayForObject = (error: ValidationError) => Array.isArray(error.value) && error.constraints !== undefined && ('isObject' in error.constraints || 'isNotEmptyObject' in error.constraints);

const EXTRA_FIELDS_IGNORED = 'validation:extraFieldsIgnored';

/**
 * A DTO whose unknown fields are dropped, not refused (a line item: api-v1 lets a client send base
 * line items back with their `total`); its fields named after Object.prototype members are
 * dropped like any other extra field.
 */
export const ExtraFieldsIgnored = (): ClassDecorator => (target) => Reflect.defineMetadata(EXTRA_FIELDS_IGNORED, true, target);

/** The names of Object.prototype's members (`toString`, `hasOwnProperty`, `constructor`, …). */
const PROTOTYPE_MEMBERS = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * Fields named after Object.prototype's members in a body or query validated into a DTO:
 * class-validator looks a field's rules up in a plain object and finds the member there, and
 * class-transformer skips a key whose member is a function, so `{"toString": 1}` was neither
 * refused nor kept (found by a review, 2026-11-26). No DTO declares such a field. `given` is the
 * request's value, `validated` what it became: keys of free-form maps (plain objects there) are
 * not checked.
 */
function prototypeNamedFields(given: unknown, validated: unknown, path: string, out: FieldError[]): FieldError[] {
  if (Array.isArray(given)) {
    given.forEach((item, index) => prototypeNamedFields(item, Array.isArray(validated) ? validated[index] : undefined, `${path}[${index}]`, out));
  } else if (given !== null && typeof given === 'object' && validated !== null && typeof validated === 'object') {
    const prototype = Object.getPrototypeOf(validated) as { constructor?: object } | null;
    const declared = prototype !== Object.prototype && prototype !== null && Reflect.getMetadata(EXTRA_FIELDS_IGNORED, prototype.constructor as object) !== true;
    for (const key of Object.keys(given)) {
      const at = path ? `${path}.${key}` : key;
      if (declared && PROTOTYPE_MEMBERS.has(key)) out.push({ path: at, message: 'unknown field' });
      else prototypeNamedFields((given as Record<string, unknown>)[key], (validated as Record<string, unknown>)[key], at, out);
    }
  }
  return out;
}

function hasPrototypeNamedKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasPrototypeNamedKey);
  if (value === null || typeof value !== 'object') return false;
  return Object.keys(value).some((key) => PROTOTYPE_MEMBERS.has(key) || hasPrototypeNamedKey((value as Record<string, unknown>)[key]));
}

/**
 * A query's refusal with each parameter given more than once told so, rather than that it is no
 * number or no string (the parser hands a repeated parameter over as an array: no parameter takes
 * several values). An unknown parameter is still told it is unknown, repeated or not.
 */
function toldOfRepeats(refusal: ValidationFailed, query: object): ValidationFailed {
  const repeated = new Set(Object.entries(query).flatMap(([name, given]) => (Array.isArray(given) ? [name] : [])));
  if (repeated.size === 0) return refusal;
  const fields = refusal.fields.map((field) => (repeated.has(field.path) && field.message !== 'unknown field' ? { path: field.path, message: 'given more than once' } : field));
  return new ValidationFailed(fields.filter((field, index) => fields.findIndex((other) => other.path === field.path && other.message === field.message) === index));
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
    if (metadata.type !== 'query' || !type || !value || typeof value !== 'object') return this.validated(value, metadata);
    const key = JSON.stringify(value);
    let valid = this.validQueries.get(type);
    const kept = valid?.get(key);
    if (kept) return Object.assign(Object.create(type.prototype as object) as object, kept);
    const result = (await this.validated(value, metadata).catch((error: unknown) => {
      throw error instanceof ValidationFailed ? toldOfRepeats(error, value) : error;
    })) as object;
    if (!valid) this.validQueries.set(type, (valid = new LruMap(QUERIES_KEPT)));
    valid.set(key, { ...result });
    return result;
  }

  private async validated(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && metadata.metatype && metadata.metatype !== Object) {
      const oversized = oversizedParts(value, [], []);
      if (oversized.length > 0) throw new ValidationFailed(oversized);
    }
    // Nest deletes `constructor` keys from the value it validates: a copy keeps them to be told.
    const given = hasPrototypeNamedKey(value) ? structuredClone(value) : null;
    const result = await super.transform(value, metadata);
    const unknown = given === null ? [] : prototypeNamedFields(given, result, '', []);
    if (unknown.length > 0) throw new ValidationFailed(unknown);
    return result;
  }
}

/** More items than any array of a request body holds (line items: 200, recipients: 20). */
const MAX_BODY_ARRAY_ITEMS = 1_000;
/** More fields than any object of a request body has. */
const MAX_BODY_OBJECT_FIELDS = 200;

/**
 * The arrays and objects of a body larger than any request has, refused before class-transformer
 * and class-validator see them: the first removes repeated keys in time quadratic in an object's
 * keys, and the second validates every item of an array that is already too long. One request
 * of 100,000 unknown fields or 349,000 empty objects, under the 1 MiB limit, held the whole
 * process for 9 to 11 s (found by a review, 2026-11-27). One pass over the parsed body, on every
 * request with one: the path of a part is composed only when the part is refused.
 */
function oversizedParts(value: unknown, at: Array<string | number>, out: FieldError[]): FieldError[] {
  if (Array.isArray(value)) {
    if (value.length > MAX_BODY_ARRAY_ITEMS) out.push(refusedPart(at, `holds ${value.length} items; no array of a request holds more than ${MAX_BODY_ARRAY_ITEMS}`));
    else
      for (let index = 0; index < value.length; index++) {
        at.push(index);
        oversizedParts(value[index], at, out);
        at.pop();
      }
  } else if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length > MAX_BODY_OBJECT_FIELDS) out.push(refusedPart(at, `has ${keys.length} fields; no object of a request has more than ${MAX_BODY_OBJECT_FIELDS}`));
    else
      for (const key of keys) {
        at.push(key);
        oversizedParts((value as Record<string, unknown>)[key], at, out);
        at.pop();
      }
  }
  return out;
}

/**
 * A refused part at its path (`lineItems[0].description`), the body itself at `''`; cut as
 * childPath cuts every path the body checks write, so a long key cannot make each refusal long.
 */
function refusedPart(at: Array<string | number>, rule: string): FieldError {
  const path = at.reduce<string>(childPath, '');
  return { path, message: `${path || 'the body'} ${rule}` };
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

/**
 * The body of a POST that takes none (api-v1 "Request: none"): no body, or an empty object. A
 * field is refused as unknown, as every other body refuses one, rather than silently ignored.
 */
export const NoBody = () => Body(new NoFieldsPipe());

class NoFieldsPipe implements PipeTransform {
  transform(value: unknown): undefined {
    const fields = value !== null && typeof value === 'object' ? Object.keys(value) : [];
    if (fields.length > 0) throw new ValidationFailed(fields.map((path) => ({ path, message: 'unknown field' })));
    return undefined;
  }
}
