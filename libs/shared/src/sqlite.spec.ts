import Database from 'better-sqlite3';
import { limitClause } from './sqlite';

describe('limitClause', () => {
  it('writes a whole number into the SQL, -1 (no limit) included', () => {
    expect(limitClause(50)).toBe('LIMIT 50');
    expect(limitClause(0)).toBe('LIMIT 0');
    expect(limitClause(-1)).toBe('LIMIT -1');
  });

  it.each([[1.5], [Number.NaN], [Number.POSITIVE_INFINITY], [2 ** 60]])('refuses %p, which must never reach SQL text', (count) => {
    expect(() => limitClause(count)).toThrow(RangeError);
  });

  it('limits a query as a bound LIMIT does', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY); INSERT INTO t (n) VALUES (1), (2), (3);');
    expect(db.prepare(`SELECT n FROM t ORDER BY n ${limitClause(2)}`).pluck().all()).toEqual([1, 2]);
    expect(db.prepare(`SELECT n FROM t ORDER BY n ${limitClause(-1)}`).pluck().all()).toEqual([1, 2, 3]);
    db.close();
  });
});
