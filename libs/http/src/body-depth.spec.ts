import { duplicateKeyPaths, forbiddenKeyPaths, jsonDepth, malformedTexts } from './body-depth';

describe('jsonDepth', () => {
  it('counts objects and arrays, not scalars', () => {
    expect(jsonDepth(1)).toBe(0);
    expect(jsonDepth(null)).toBe(0);
    expect(jsonDepth({})).toBe(1);
    expect(jsonDepth({ a: [1, { b: 'x' }] })).toBe(3);
    expect(jsonDepth([[], [[[]]]])).toBe(4);
  });

  it('walks a 100,000-deep value without overflowing the stack, and stops early at a limit', () => {
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
    expect(jsonDepth(deep)).toBe(100_000);
    expect(jsonDepth(deep, 32)).toBe(33);
  });
});

describe('forbiddenKeyPaths', () => {
  it('finds __proto__ and constructor.prototype keys at any depth, with their field paths', () => {
    const text = '{"email":"a@example.com","__proto__":{"admin":true},"lineItems":[{"x":1},{"constructor":{"prototype":{"admin":true}}}],"constructor":"plain"}';
    expect(forbiddenKeyPaths(text)).toEqual(['__proto__', 'lineItems[1].constructor.prototype']);
  });

  it('finds none in ordinary JSON, and none in text that is not JSON', () => {
    expect(forbiddenKeyPaths('{"constructor":{"name":"x"},"proto":1,"items":[{"__proto":2}]}')).toEqual([]);
    expect(forbiddenKeyPaths('{"__proto__":')).toEqual([]);
  });
});

describe('malformedTexts', () => {
  const SURROGATE = 'must be well-formed Unicode text (it holds half of a surrogate pair)';
  const NUL = 'must not hold the character U+0000 (NUL)';

  it('finds keys and strings with half of a surrogate pair at any depth, with their field paths', () => {
    const body = JSON.parse('{"name":"ok 😀","city":"x\\ud800y","lineItems":[{"description":"\\udc00"},{"description":"fine"}],"\\ud83d":1,"n":5}');
    expect(malformedTexts(body)).toEqual([
      { path: 'city', message: SURROGATE },
      { path: 'lineItems[0].description', message: SURROGATE },
      { path: '\ud83d', message: SURROGATE },
    ]);
  });

  it('finds keys and strings holding NUL, and says so', () => {
    const body = JSON.parse('{"name":"A\\u0000B","items":[{"k\\u0000":1}],"ok":"A\\u0001B"}');
    expect(malformedTexts(body)).toEqual([
      { path: 'items[0].k\u0000', message: NUL },
      { path: 'name', message: NUL },
    ]);
  });

  it('finds none in well-formed text', () => {
    expect(malformedTexts({ name: 'Łukasz 😀 中文', items: ['a', { b: 'c' }], n: null, tab: 'a\tb\nc' })).toEqual([]);
  });
});

describe('duplicateKeyPaths', () => {
  it('finds a key given twice in one object, at any depth, with its field path', () => {
    const text = '{"a":1,"b":{"c":"x","c":"y"},"items":[{"d":1},{"d":2,"e":[{"f":1,"f":2}]}],"a":3}';
    expect(duplicateKeyPaths(text)).toEqual(['a', 'b.c', 'items[1].e[0].f']);
  });

  it('compares keys as parsed, and takes no string value, escaped quote or brace in a string for a key', () => {
    expect(duplicateKeyPaths('{"a":1,"\\u0061":2}')).toEqual(['a']);
    expect(duplicateKeyPaths('{"a":"a","b":"{\\"a\\":1,\\"a\\":2}","c":["a","a"],"d":{"a":1},"e":{"a":1}}')).toEqual([]);
  });

  it('finds none in a body without repeated keys, or in a value that is no object', () => {
    expect(duplicateKeyPaths('{"lineItems":[{"description":"x","quantity":1},{"description":"y","quantity":2}]}')).toEqual([]);
    expect(duplicateKeyPaths('[1,2,"x"]')).toEqual([]);
  });
});

describe('the refused places a check names', () => {
  const longKey = 'k'.repeat(600_000);

  it('given a body of a long key over many repeated members, then the duplicate-key check names at most 20, each cut to 200 characters', () => {
    const text = `{"${longKey}":{${Array.from({ length: 60_000 }, () => '"x":0').join(',')}}}`;
    const found = duplicateKeyPaths(text);
    expect(found).toEqual([`${'k'.repeat(200)}…`]);
  });

  it('given many malformed or forbidden places under a long key, then each check names at most 20, each cut to 200 characters', () => {
    const body = { [longKey]: Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`x${i}`, '\ud800'])) };
    const malformed = malformedTexts(body).map(({ path }) => path);
    expect(new Set(malformed)).toEqual(new Set([`${'k'.repeat(200)}…`]));
    const text = `{"${longKey}":[${Array.from({ length: 30_000 }, () => '{"__proto__":1}').join(',')}]}`;
    const forbidden = forbiddenKeyPaths(text);
    expect(forbidden.length).toBeLessThanOrEqual(20);
    for (const path of forbidden) expect(path.length).toBeLessThanOrEqual(201);
  });
});
