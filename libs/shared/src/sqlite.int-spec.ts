import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeSqliteDatabase, openSqliteDatabase } from './sqlite';

describe('openSqliteDatabase', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves checkpoints to the background thread, which copies a grown WAL into the database', async () => {
    const file = join(dir, 'nested', 'store.db');
    const db = openSqliteDatabase(file, { busyTimeoutMs: 1_000, synchronous: 'NORMAL' });
    try {
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      db.exec('CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      const insert = db.prepare('INSERT INTO docs (body) VALUES (?)');
      const body = 'x'.repeat(4_000);
      // About 8 MiB in commits of 100 rows: past the 4 MiB at which the thread checkpoints.
      for (let batch = 0; batch < 20; batch++) db.transaction(() => { for (let i = 0; i < 100; i++) insert.run(body); })();
      // The commits alone wrote only the WAL.
      expect(statSync(file).size).toBeLessThan(1024 * 1024);
      const deadline = Date.now() + 10_000;
      while (statSync(file).size < 6 * 1024 * 1024 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(statSync(file).size).toBeGreaterThan(6 * 1024 * 1024);
      expect(db.prepare('SELECT COUNT(*) FROM docs').pluck().get()).toBe(2_000);
    } finally {
      closeSqliteDatabase(db);
    }
  });

  it('opens and closes an in-memory database, which has no file to checkpoint', () => {
    const db = openSqliteDatabase(':memory:', { busyTimeoutMs: 1_000, synchronous: 'FULL' });
    db.exec('CREATE TABLE t (n INTEGER)');
    db.prepare('INSERT INTO t VALUES (1)').run();
    expect(db.prepare('SELECT n FROM t').pluck().get()).toBe(1);
    closeSqliteDatabase(db);
    expect(db.open).toBe(false);
  });
});
