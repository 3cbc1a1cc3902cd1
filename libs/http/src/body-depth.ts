import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './error-envelope.filter';

/** No body of this API nests deeper than a configuration's components and options; 32 is ample. */
export const MAX_BODY_DEPTH = 32;

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
 * Where a JSON text has the keys that Fastify's parser refuses as prototype poisoning: `__proto__`,
 * and `constructor` holding `prototype`. Field paths as validation gives them
 * (`lineItems[0].__proto__`); empty when the text is not JSON or has none. Walked without recursion.
 */
export function forbiddenKeyPaths(text: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  const found: string[] = [];
  const pending: Array<[unknown, string]> = [[value, '']];
  while (pending.length > 0) {
    const [current, path] = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      current.forEach((item, i) => pending.push([item, `${path}[${i}]`]));
      continue;
    }
    for (const [key, child] of Object.entries(current)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      if (key === '__proto__') found.push(childPath);
      else if (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) found.push(`${childPath}.prototype`);
      else pending.push([child, childPath]);
    }
  }
  return found.sort();
}

/**
 * Every JSON body of this API is an object. Refuses any other JSON value (`null`, a string, an
 * array) with 422, and bodies nested deeper than MAX_BODY_DEPTH with 400 before validation walks
 * them (validators and transformers recurse, and a 10,000-deep array would overflow their stack).
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
    if (jsonDepth(body, MAX_BODY_DEPTH) <= MAX_BODY_DEPTH) return done();
    reply
      .status(400)
      .type('application/json')
      .send(errorBody('invalid_json', `The request body is nested more than ${MAX_BODY_DEPTH} levels deep.`));
  });
}
