/** Dotted paths into read-model documents (`customer.email`), shared by the adapters. */

export function readPath(document: Record<string, unknown>, path: string): unknown {
  let value: unknown = document;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A copy of `document` with `path` set to `value`, copying only the objects along the path. */
export function withPath<T extends Record<string, unknown>>(document: T, path: string, value: unknown): T {
  const [head, ...rest] = path.split('.');
  if (rest.length === 0) return { ...document, [head]: value };
  const child = document[head];
  const nested = child !== null && typeof child === 'object' && !Array.isArray(child) ? (child as Record<string, unknown>) : {};
  return { ...document, [head]: withPath(nested, rest.join('.'), value) };
}
