import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { copyAtOneInstant, SnapshotError } from './sqlite-snapshot';

describe('copyAtOneInstant', () => {
  let dir: string;
  const opened: Database.Database[] = [];
  /** A database in WAL mode, as the stores open theirs. */
  const open = (name: string) => {
    const db = new Database(join(dir, name));
    db.pragma('journal_mode = WAL');
    opened.push(db);
    return db;
  };
  const rows = (db: Database.Database, sql: string) => db.prepare(sql).raw().safeIntegers().all();

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-snapshot-'));
  });
  afterEach(() => {
    for (const db of opened.splice(0)) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('given tables of every kind, then the copy holds the same rows, rowids, counters and schema, in WAL mode', () => {
    const source = open('source.db');
    source.exec(`
      CREATE TABLE log (seq INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL);
      CREATE TABLE docs (id TEXT PRIMARY KEY, doc TEXT NOT NULL, size INTEGER GENERATED ALWAYS AS (length(doc)) VIRTUAL);
      CREATE TABLE offsets (grp TEXT NOT NULL, topic TEXT NOT NULL, committed INTEGER NOT NULL, PRIMARY KEY (grp, topic)) WITHOUT ROWID;
      CREATE TABLE "odd ""name""" (rowid TEXT, value BLOB);
      CREATE INDEX docs_by_size ON docs (size);
      CREATE VIEW big_docs AS SELECT id FROM docs WHERE size > 3;
      CREATE TRIGGER docs_touch AFTER INSERT ON docs BEGIN INSERT INTO log (body) VALUES ('trigger'); END;
    `);
    source.pragma('user_version = 7');
    const insertLog = source.prepare('INSERT INTO log (body) VALUES (?)');
    for (let i = 0; i < 10; i++) insertLog.run(`message ${i}`);
    source.prepare("INSERT INTO docs (rowid, id, doc) VALUES (40, 'b', 'bbbb'), (7, 'a', 'a')").run();
    // the newest messages (11 and 12 by the trigger) gone: AUTOINCREMENT still never hands out 12 again
    source.exec('DELETE FROM log WHERE seq > 6');
    source.prepare('INSERT INTO offsets VALUES (?, ?, ?)').run('outbox', 'domain-events', 2n ** 62n + 1n);
    source.prepare('INSERT INTO "odd ""name""" VALUES (?, ?)').run('not the rowid', Buffer.from([0, 1, 2, 255]));
    const before = {
      log: rows(source, 'SELECT seq, body FROM log ORDER BY seq'),
      sequence: rows(source, 'SELECT name, seq FROM sqlite_sequence'),
    };

    const copy = copyAtOneInstant([{ source: join(dir, 'source.db'), target: join(dir, 'copy.db') }]);

    expect(copy.databases).toEqual([
      expect.objectContaining({ tables: { log: 6, docs: 2, offsets: 1, 'odd "name"': 1 }, rows: 10, bytes: expect.any(Number) }),
    ]);
    expect(readdirSync(dir).sort()).toEqual(['copy.db', 'source.db', 'source.db-shm', 'source.db-wal']);
    const restored = open('copy.db');
    expect(restored.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(restored.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(restored.pragma('user_version', { simple: true })).toBe(7);
    expect(rows(restored, 'SELECT seq, body FROM log ORDER BY seq')).toEqual(before.log);
    expect(rows(restored, 'SELECT name, seq FROM sqlite_sequence')).toEqual(before.sequence);
    expect(rows(restored, 'SELECT rowid, id, doc, size FROM docs ORDER BY rowid')).toEqual([
      [7n, 'a', 'a', 1n],
      [40n, 'b', 'bbbb', 4n],
    ]);
    expect(rows(restored, 'SELECT * FROM offsets')).toEqual([['outbox', 'domain-events', 2n ** 62n + 1n]]);
    expect(rows(restored, 'SELECT * FROM "odd ""name"""')).toEqual([['not the rowid', Buffer.from([0, 1, 2, 255])]]);
    expect(rows(restored, 'SELECT * FROM big_docs')).toEqual([['b']]);
    // the next message continues after the highest ever handed out, and the trigger came along
    restored.prepare("INSERT INTO docs (id, doc) VALUES ('c', 'c')").run();
    expect(rows(restored, 'SELECT seq, body FROM log ORDER BY seq DESC LIMIT 1')).toEqual([[13n, 'trigger']]);
    expect(rows(restored, "SELECT name FROM sqlite_master WHERE type = 'index'")).toEqual([['sqlite_autoindex_docs_1'], ['docs_by_size']]);
  });

  it('given another connection holding one file\'s write lock throughout, then it fails naming the cause, writes nothing and holds no lock', () => {
    open('a.db').exec('CREATE TABLE t (x)');
    const holder = open('b.db');
    holder.exec('CREATE TABLE t (x)');
    holder.exec('BEGIN IMMEDIATE');
    const sleeps: number[] = [];

    const attempt = () =>
      copyAtOneInstant(
        [
          { source: join(dir, 'a.db'), target: join(dir, 'a-copy.db') },
          { source: join(dir, 'b.db'), target: join(dir, 'b-copy.db') },
        ],
        { lockTimeoutMs: 5, attempts: 3, sleep: (ms) => sleeps.push(ms) },
      );

    expect(attempt).toThrow(SnapshotError);
    expect(attempt).toThrow('the write locks of all 2 files could not be held at once in 3 attempts');
    expect(sleeps.length).toBe(4);
    expect(existsSync(join(dir, 'a-copy.db'))).toBe(false);
    // the first file's lock was let go: a writer gets it at once
    const writer = new Database(join(dir, 'a.db'), { timeout: 0 });
    opened.push(writer);
    expect(() => writer.prepare('INSERT INTO t VALUES (1)').run()).not.toThrow();
    holder.exec('ROLLBACK');
  });

  it('given the lock held only briefly, then a later round takes every lock and copies', () => {
    open('a.db').exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    const holder = open('b.db');
    holder.exec('CREATE TABLE t (x)');
    holder.exec('BEGIN IMMEDIATE');

    const copy = copyAtOneInstant(
      [
        { source: join(dir, 'a.db'), target: join(dir, 'a-copy.db') },
        { source: join(dir, 'b.db'), target: join(dir, 'b-copy.db') },
      ],
      // the holder commits while the copy waits between its rounds
      { lockTimeoutMs: 5, attempts: 3, sleep: () => holder.inTransaction && holder.exec("INSERT INTO t VALUES ('late'); COMMIT") },
    );

    expect(copy.databases.map((database) => database.rows)).toEqual([1, 1]);
  });

  it('given a virtual table, then it refuses the file rather than copy it wrongly', () => {
    open('fts.db').exec('CREATE VIRTUAL TABLE notes USING fts5 (body)');
    expect(() => copyAtOneInstant([{ source: join(dir, 'fts.db'), target: join(dir, 'copy.db') }])).toThrow('notes is a virtual table');
    expect(existsSync(join(dir, 'copy.db'))).toBe(false);
  });
});
