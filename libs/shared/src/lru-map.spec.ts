import { LruMap } from './lru-map';

const sortedKeys = (map: LruMap<string, number>) => [...map.keys()].sort();

describe('LruMap', () => {
  it('drops an entry not used since it was added, past its capacity, reads and writes counting as use', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect(sortedKeys(map)).toEqual(['a', 'c']);
    map.set('a', 10);
    map.set('d', 4);
    expect(sortedKeys(map)).toEqual(['a', 'd']);
    expect(map.get('c')).toBeUndefined();
    expect(map.get('a')).toBe(10);
    expect(map.size).toBe(2);
  });

  it('drops the oldest entry when every entry was used, and keeps the one just added', () => {
    const map = new LruMap<string, number>(3);
    for (const key of ['a', 'b', 'c']) map.set(key, 0);
    for (const key of ['c', 'b', 'a']) map.get(key);
    map.set('d', 0);
    expect(sortedKeys(map)).toEqual(['b', 'c', 'd']);
    map.set('e', 0);
    expect(sortedKeys(map)).toEqual(['c', 'd', 'e']);
  });

  it('keeps an entry read between two evictions over one that was not', () => {
    const map = new LruMap<string, number>(3);
    for (const key of ['a', 'b', 'c']) map.set(key, 0);
    map.get('a');
    map.set('d', 0);
    expect(sortedKeys(map)).toEqual(['a', 'c', 'd']);
    map.get('a');
    map.set('e', 0);
    expect(sortedKeys(map)).toEqual(['a', 'd', 'e']);
  });

  it('never holds more than its capacity, whatever the order of reads and writes', () => {
    const map = new LruMap<string, number>(4);
    for (let i = 0; i < 1000; i++) {
      map.set(`k${i % 7}`, i);
      map.get(`k${(i * 3) % 7}`);
      expect(map.size).toBeLessThanOrEqual(4);
    }
  });

  it('forgets a deleted entry', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    expect(map.delete('a')).toBe(true);
    expect(map.get('a')).toBeUndefined();
    expect(map.delete('a')).toBe(false);
  });
});
