import { forbiddenKeyPaths, jsonDepth } from './body-depth';

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
