import { firstCharacters, hasLoneSurrogate } from './text';

describe('firstCharacters', () => {
  it('given a text longer than the count, then it keeps that many characters, counting a surrogate pair as one', () => {
    expect(firstCharacters(`a${'😀'.repeat(120)}`, 100)).toBe(`a${'😀'.repeat(99)}`);
    expect(firstCharacters(`${'a'.repeat(99)}😀😀`, 100)).toBe(`${'a'.repeat(99)}😀`);
  });

  it('given a text within the count, then it is kept whole', () => {
    expect(firstCharacters('😀😀', 2)).toBe('😀😀');
    expect(firstCharacters('abc', 3)).toBe('abc');
    expect(firstCharacters('', 0)).toBe('');
  });
});

describe('hasLoneSurrogate', () => {
  it('finds half a pair, alone or at either end, and passes whole pairs', () => {
    expect(['x\ud800y', '\udc00', 'ok\ud83d'].map(hasLoneSurrogate)).toEqual([true, true, true]);
    expect(['😀', 'Łukasz', ''].map(hasLoneSurrogate)).toEqual([false, false, false]);
  });
});
