/**
 * RFC 8785 JSON Canonicalization Scheme (JCS): no whitespace, object members sorted by the UTF-16
 * code units of their names, numbers and strings exactly as ECMAScript's JSON.stringify prints
 * them. Properties whose value is undefined are left out, as JSON.stringify does. Anything JSON
 * cannot carry (NaN, Infinity, undefined in an array, functions, class instances) is refused
 * rather than silently changed, because the output is hashed.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`Canonical JSON cannot represent ${value}`);
      return JSON.stringify(value); // ECMAScript Number-to-String; -0 prints as 0
    case 'string':
      return JSON.stringify(value);
    case 'object':
      return Array.isArray(value) ? canonicalArray(value) : canonicalObject(value as object);
    default:
      throw new TypeError(`Canonical JSON cannot represent a value of type ${typeof value}`);
  }
}

function canonicalArray(values: readonly unknown[]): string {
  const parts = values.map((v, i) => {
    if (v === undefined) throw new TypeError(`Canonical JSON cannot represent undefined at index ${i}`);
    return canonicalJson(v);
  });
  return `[${parts.join(',')}]`;
}

function canonicalObject(value: object): string {
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    throw new TypeError('Canonical JSON accepts plain objects only');
  }
  const record = value as Record<string, unknown>;
  // Default sort compares UTF-16 code units, which is exactly the order JCS prescribes.
  const members = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(',')}}`;
}
