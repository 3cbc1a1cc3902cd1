import { LruMap } from './lru-map';

describe('LruMap', () => {
  it('drops the least recently used entry past its capacity, reads and writes counting as use', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect([...map.keys()]).toEqual(['a', 'c']);
    map.set('a', 10);
    map.set('d', 4);
    expect([...map.keys()]).toEqual(['a', 'd']);
    expect(map.get('c')).toBeUndefined();
    expect(map.size).toBe(2);
  });

  it('forgets a deleted entry', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    expect(map.delete('a')).toBe(true);
    expect(map.get('a')).toBeUndefined();
    expect(map.delete('a')).toBe(false);
  });
});
