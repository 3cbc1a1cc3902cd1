import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { canonicalJson } from '@lib/shared';
import { configHash } from './canonical-json';

/** Any JSON value (finite numbers, full unicode strings including lone surrogates' absence). */
const json = fc.jsonValue({ maxDepth: 4 });

/** The same object with its members inserted in another order, at every level. */
function shuffled(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v, i) => shuffled(v, seed + i));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  const order = keys.map((k, i) => ({ k, w: (i * 7919 + seed * 104729) % (keys.length + 13) })).sort((a, b) => a.w - b.w);
  // fromEntries defines own members, so a "__proto__" member stays a member instead of setting the prototype.
  return Object.fromEntries(order.map(({ k }) => [k, shuffled((value as Record<string, unknown>)[k], seed + 1)]));
}

describe('canonical JSON (RFC 8785) properties', () => {
  it('parses back to the same value', () => {
    fc.assert(fc.property(json, (value) => expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)))));
  });

  it('does not depend on the order in which members were inserted', () => {
    fc.assert(
      fc.property(json, fc.nat(1000), (value, seed) => expect(canonicalJson(shuffled(value, seed))).toBe(canonicalJson(value))),
      { examples: [[JSON.parse('{"__proto__":0,"a":1}'), 0]] },
    );
  });

  it('is idempotent: canonicalizing the parsed canonical form gives the same text', () => {
    fc.assert(fc.property(json, (value) => {
      const once = canonicalJson(value);
      expect(canonicalJson(JSON.parse(once))).toBe(once);
    }));
  });

  it('sorts members by UTF-16 code units, not by code points or locale', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ unit: 'binary', maxLength: 4 }), { maxLength: 8 }), (keys) => {
        const object = Object.fromEntries(keys.map((k, i) => [k, i]));
        const order = Object.keys(JSON.parse(canonicalJson(object)));
        const expected = [...keys].sort((a, b) => {
          for (let i = 0; i < Math.min(a.length, b.length); i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return a.charCodeAt(i) - b.charCodeAt(i);
          return a.length - b.length;
        });
        expect(order).toEqual(expected);
      }),
    );
  });

  it('prints numbers in ECMAScript shortest form, so equal numbers hash equally (1.0 = 1, -0 = 0, 1e21)', () => {
    expect(canonicalJson({ a: 1.0, b: -0, c: 1e21, d: 0.000001, e: 1e-7 })).toBe('{"a":1,"b":0,"c":1e+21,"d":0.000001,"e":1e-7}');
    fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => expect(Number(canonicalJson(n))).toBe(n === 0 ? 0 : n)));
  });

  it('refuses what JSON cannot carry instead of hashing something else', () => {
    fc.assert(fc.property(fc.constantFrom(NaN, Infinity, -Infinity), (n) => expect(() => canonicalJson({ n })).toThrow(TypeError)));
  });

  it('configHash is sha256 of the canonical UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), json, { maxKeys: 5 }), (configuration) => {
        const expected = createHash('sha256').update(Buffer.from(canonicalJson(configuration), 'utf8')).digest('hex');
        expect(configHash(configuration as never)).toBe(`sha256:${expected}`);
      }),
    );
  });
});
