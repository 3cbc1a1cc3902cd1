import { jsonDepth } from './body-depth';

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
