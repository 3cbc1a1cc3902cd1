import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
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

  it('starts the WAL again while commits never pause, which leaves passive checkpoints no moment to do it', async () => {
    const file = join(dir, 'busy.db');
    const db = openSqliteDatabase(file, { busyTimeoutMs: 5_000, synchronous: 'NORMAL' });
    try {
      db.exec('CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      const insert = db.prepare('INSERT INTO docs (body) VALUES (?)');
      const body = 'x'.repeat(4_000);
      const walSizes: number[] = [];
      let rows = 0;
      // A commit of 40 KB every millisecond or so (~300 MiB in 8 s when this test was written):
      // every passive checkpoint overlaps commits. Without the forced restart the WAL only grows.
      // The deadline is for a failure only, and leaves room for a slow, busy machine.
      const deadline = Date.now() + 25_000;
      let largest = 0;
      let cutBackFromPastTheLimit = false;
      while (Date.now() < deadline && !cutBackFromPastTheLimit) {
        db.transaction(() => {
          for (let i = 0; i < 10; i++) insert.run(body);
        })();
        rows += 10;
        const size = statSync(`${file}-wal`).size;
        cutBackFromPastTheLimit = largest > 64 * 1024 * 1024 && size < largest;
        largest = Math.max(largest, size);
        walSizes.push(size);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      expect(cutBackFromPastTheLimit).toBe(true);
      expect(walSizes[walSizes.length - 1]).toBeLessThanOrEqual(16 * 1024 * 1024);
      expect(db.prepare('SELECT COUNT(*) FROM docs').pluck().get()).toBe(rows);
    } finally {
      closeSqliteDatabase(db);
    }
  }, 40_000);

  it('backs off from starting the WAL again while a reader of an older snapshot holds it, since each try holds writers off', async () => {
    const file = join(dir, 'pinned.db');
    const db = openSqliteDatabase(file, { busyTimeoutMs: 5_000, synchronous: 'NORMAL' });
    const reader = new Database(file);
    try {
      db.exec('CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      db.prepare('INSERT INTO docs (body) VALUES (?)').run('first');
      // Another connection (another process, say) in a long read: the WAL cannot start again.
      reader.exec('BEGIN');
      reader.prepare('SELECT COUNT(*) FROM docs').get();
      const insert = db.prepare('INSERT INTO docs (body) VALUES (?)');
      const body = 'x'.repeat(4_000);
      let heldUp = 0;
      const started = Date.now();
      while (Date.now() - started < 6_000) {
        const commitStarted = performance.now();
        db.transaction(() => {
          for (let i = 0; i < 10; i++) insert.run(body);
        })();
        if (performance.now() - commitStarted > 40) heldUp++;
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      // Each try holds writers off for up to 50 ms. Tried every round (200 ms) that was 21 held-up
      // commits in these 6 s; with the back-off it was 4.
      expect(heldUp).toBeLessThanOrEqual(8);
    } finally {
      reader.exec('COMMIT');
      reader.close();
      closeSqliteDatabase(db);
    }
  }, 30_000);

  it('opens and closes an in-memory database, which has no file to checkpoint', () => {
    const db = openSqliteDatabase(':memory:', { busyTimeoutMs: 1_000, synchronous: 'FULL' });
    db.exec('CREATE TABLE t (n INTEGER)');
    db.prepare('INSERT INTO t VALUES (1)').run();
    expect(db.prepare('SELECT n FROM t').pluck().get()).toBe(1);
    closeSqliteDatabase(db);
    expect(db.open).toBe(false);
  });
});
