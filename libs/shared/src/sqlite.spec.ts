import Database from 'better-sqlite3';
import { limitClause, retryWhileBusy } from './sqlite';

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

describe('retryWhileBusy', () => {
  const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

  it('tries again while the database is busy, waiting a little longer each time', () => {
    let clock = 0;
    const waits: number[] = [];
    let calls = 0;
    const result = retryWhileBusy(
      () => {
        if (++calls < 4) throw busy();
        return 'wal';
      },
      5_000,
      (ms) => {
        waits.push(ms);
        clock += ms;
      },
      () => clock,
    );
    expect(result).toBe('wal');
    expect(waits).toEqual([1, 2, 4]);
  });

  it('gives up with the error once the time is over, and never retries other errors', () => {
    let clock = 0;
    expect(() => retryWhileBusy(() => { throw busy(); }, 100, (ms) => void (clock += ms), () => clock)).toThrow('database is locked');
    expect(clock).toBeGreaterThanOrEqual(100);
    let calls = 0;
    const broken = Object.assign(new Error('file is not a database'), { code: 'SQLITE_NOTADB' });
    expect(() => retryWhileBusy(() => { calls++; throw broken; }, 100, () => undefined, () => 0)).toThrow('file is not a database');
    expect(calls).toBe(1);
  });

  it('sleeps for real by default', () => {
    let calls = 0;
    const started = Date.now();
    retryWhileBusy(() => {
      if (++calls < 3) throw busy();
    }, 1_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2);
  });
});
