import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { firstCharacters, hasLoneSurrogate, shortened } from '@lib/shared';
import { errorBody } from './error-envelope.filter';

/** No body of this API nests deeper than a configuration's components and options; 32 is ample. */
export const MAX_BODY_DEPTH = 32;

/** How many refused places a check names, and how long a path it writes out (one refusal is enough to refuse the body). */
const MAX_REPORTED = 20;
const MAX_REPORTED_PATH = 200;

/**
 * A member's or item's field path (`lineItems[0].description`), at most MAX_REPORTED_PATH
 * characters and `…` when cut. A body of a 600,000-character key over 60,000 repeated members made
 * the duplicate-key check write out 60,000 paths of 600,000 characters: one anonymous request ran
 * the process out of memory (found by a review). Cut as it is built, no path grows with the key.
 */
export function childPath(path: string, segment: string | number): string {
  if (typeof segment === 'number') return shortened(`${path}[${segment}]`, MAX_REPORTED_PATH);
  const key = firstCharacters(segment, MAX_REPORTED_PATH + 1);
  return shortened(path === '' ? key : `${path}.${key}`, MAX_REPORTED_PATH);
}

/** The paths a check refuses: the first MAX_REPORTED it finds (one is enough to refuse the body). */
class RefusedPaths {
  private readonly paths = new Set<string>();
  private count = 0;

  get full(): boolean {
    return this.count >= MAX_REPORTED;
  }

  add(path: string): void {
    if (this.full) return;
    this.count++;
    this.paths.add(path);
  }

  sorted(): string[] {
    return [...this.paths].sort();
  }
}

/** The nesting depth of a parsed JSON value, walked without recursion so a hostile body cannot overflow the stack. */
export function jsonDepth(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(current) ? current : Object.values(current)) pending.push([child, level]);
  }
  return deepest;
}

/**
 * Visits each member and item of a parsed JSON value, depth first and without recursion, with its
 * field path as validation gives it (`lineItems[0].description`), its key (null for an item) and
 * its value. `visit` returns false to leave out what is inside that value.
 */
function walkJson(value: unknown, visit: (path: string, key: string | null, child: unknown) => boolean): void {
  const pending: Array<[unknown, string]> = [[value, '']];
  while (pending.length > 0) {
    const [current, path] = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      current.forEach((item, i) => {
        const itemPath = childPath(path, i);
        if (visit(itemPath, null, item)) pending.push([item, itemPath]);
      });
      continue;
    }
    for (const [key, child] of Object.entries(current)) {
      const memberPath = childPath(path, key);
      if (visit(memberPath, key, child)) pending.push([child, memberPath]);
    }
  }
}

/**
 * Where a JSON text has the keys that Fastify's parser refuses as prototype poisoning: `__proto__`,
 * and `constructor` holding `prototype`. Field paths as validation gives them
 * (`lineItems[0].__proto__`); empty when the text is not JSON or has none.
 */
export function forbiddenKeyPaths(text: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  const found = new RefusedPaths();
  walkJson(value, (path, key, child) => {
    if (found.full) return false;
    if (key === '__proto__') found.add(path);
    else if (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) found.add(childPath(path, 'prototype'));
    else return true;
    return false;
  });
  return found.sorted();
}

/**
 * Where a JSON text names a key twice in one object (`{"total":1,"total":2}`): JSON.parse keeps
 * the last, and a proxy, a WAF or the client's own log may read the first, so the request would
 * not mean one thing. Field paths as validation gives them; keys compared as parsed (`"a"` and
 * `"\u0061"` are one key). For a text JSON.parse took: one pass, no recursion. None for a text
 * nested deeper than MAX_BODY_DEPTH, which is refused for that.
 */
export function duplicateKeyPaths(text: string): string[] {
  // per open object: its keys so far and the key whose value is being read (null: a key is next); per open array: its index
  const stack: Array<{ path: string; keys: Set<string> | null; key: string | null; index: number }> = [];
  const found = new RefusedPaths();
  for (let i = 0; i < text.length && !found.full; i++) {
    const c = text[i];
    const top = stack.at(-1);
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.keys && top.key === null) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.keys.has(key)) found.add(childPath(top.path, key));
        top.keys.add(key);
        top.key = key;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      // A body too deep is refused for its depth before validation (registerBodyShapeChecks).
      if (stack.length === MAX_BODY_DEPTH) return [];
      const path = !top ? '' : childPath(top.path, top.keys ? top.key! : top.index);
      stack.push({ path, keys: c === '{' ? new Set() : null, key: null, index: 0 });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',' && top) {
      if (top.keys) top.key = null;
      else top.index++;
    }
  }
  return found.sorted();
}

/**
 * What is wrong with a key or string of a body, if anything. Text with half of a surrogate pair
 * (`"\ud800"` is valid JSON) is not well-formed Unicode: stored, it breaks every consumer that
 * encodes it as UTF-8 (a CRM's JSON decoder, PostgreSQL's jsonb). The NUL character breaks the
 * same consumers (PostgreSQL's text and jsonb refuse it, C strings end at it) and no text of this
 * API has a use for it.
 */
function textFault(text: string): string | null {
  if (hasLoneSurrogate(text)) return 'must be well-formed Unicode text (it holds half of a surrogate pair)';
  if (text.includes('\u0000')) return 'must not hold the character U+0000 (NUL)';
  return null;
}

/** Where a parsed body holds a key or string that no field may hold (see textFault), and why. */
export function malformedTexts(body: unknown): Array<{ path: string; message: string }> {
  const found = new RefusedPaths();
  const faults = new Map<string, string>();
  walkJson(body, (path, key, child) => {
    const fault = (key === null ? null : textFault(key)) ?? (typeof child === 'string' ? textFault(child) : null);
    if (fault !== null) {
      found.add(path);
      if (!faults.has(path)) faults.set(path, fault);
    }
    return !found.full;
  });
  return found.sorted().map((path) => ({ path, message: faults.get(path)! }));
}

/**
 * Every JSON body of this API is an object. Refuses any other JSON value (`null`, a string, an
 * array) with 422, bodies nested deeper than MAX_BODY_DEPTH with 400 before validation walks
 * them (validators and transformers recurse, and a 10,000-deep array would overflow their stack),
 * and text that is not well-formed Unicode or holds NUL with 422.
 */
export function registerBodyShapeChecks(fastify: FastifyInstance): void {
  // With `done` rather than async: this runs for every request, most of them without a body.
  fastify.addHook('preValidation', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const body = request.body;
    // An unknown route is 404 whatever its body (its body is not parsed either).
    if (body === undefined || request.routeOptions.url === undefined) return done();
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      reply
        .status(422)
        .type('application/json')
        .send(errorBody('validation_error', 'The request is invalid.', { fields: [{ path: '', message: 'the body must be a JSON object' }] }));
      return;
    }
    if (jsonDepth(body, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) {
      reply
        .status(400)
        .type('application/json')
        .send(errorBody('invalid_json', `The request body is nested more than ${MAX_BODY_DEPTH} levels deep.`));
      return;
    }
    const malformed = malformedTexts(body);
    if (malformed.length === 0) return done();
    reply.status(422).type('application/json').send(errorBody('validation_error', 'The request is invalid.', { fields: malformed }));
  });
}
