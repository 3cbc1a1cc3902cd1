import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export interface SnapshotOptions {
  /** How long each write lock is waited for before every lock is let go and the round tried again. */
  lockTimeoutMs?: number;
  /** Rounds of taking every write lock before the copy fails. */
  attempts?: number;
  /** Waits between rounds (synchronously: the locks are taken by synchronous calls). */
  sleep?: (ms: number) => void;
}

export interface CopiedDatabase {
  source: string;
  target: string;
  /** rows per table, as read in the snapshot and found again in the copy */
  tables: Record<string, number>;
  rows: number;
  bytes: number;
}

export interface ConsistentCopy {
  databases: CopiedDatabase[];
  /** how long writers of the files were held off, from the first write lock taken to the last let go */
  heldWritersMs: number;
}

/** A copy that cannot be taken: every write lock could not be had, or the copy differs from the snapshot. */
export class SnapshotError extends Error {}

const pause = new Int32Array(new SharedArrayBuffer(4));
const sleepSync = (ms: number) => void Atomics.wait(pause, 0, 0, ms);

/** How long a read connection waits to start its transaction (a WAL being recovered by another process). */
const READ_TIMEOUT_MS = 5_000;

/**
 * Copies SQLite databases in WAL mode as they all were at one instant, while other processes keep
 * writing to them. Stores that write to several files in a fixed order (an event, then the
 * checkpoint of the read model built from it) keep their order across the copies only if no file
 * is copied from a later moment than another: per-file backups one after the other do not give
 * that. So, for a moment, no file can change: every file's write lock is taken (in the given
 * order, giving up and starting again rather than waiting long with some held), a read
 * transaction is started on each, which fixes its WAL snapshot, and the locks are let go. Writers
 * wait only for that moment; the copies are then read from the snapshots while they carry on.
 *
 * Each file is copied row by row (VACUUM INTO and ATTACH cannot run inside a transaction) into
 * `<target>.partial`, checked (integrity, rows per table, AUTOINCREMENT counters), synced and
 * renamed to `target`: a target exists only complete, and readable by its owner only. Statistics
 * tables (sqlite_stat*) are not copied; ANALYZE makes them again. A target that exists is
 * replaced: the caller decides.
 */
export function copyAtOneInstant(files: Array<{ source: string; target: string }>, options: SnapshotOptions = {}): ConsistentCopy {
  const opened: Array<{ lock: Database.Database; read: Database.Database }> = [];
  try {
    for (const { source } of files) {
      opened.push({
        lock: new Database(source, { fileMustExist: true, timeout: options.lockTimeoutMs ?? 200 }),
        read: new Database(source, { fileMustExist: true, timeout: READ_TIMEOUT_MS }),
      });
    }
    const heldWritersMs = startSnapshots(
      opened.map(({ lock }) => lock),
      opened.map(({ read }) => read),
      options,
    );
    const databases = files.map(({ source, target }, i) => ({ source, target, ...copyDatabase(opened[i].read, target) }));
    return { databases, heldWritersMs };
  } finally {
    for (const { lock, read } of opened) {
      lock.close();
      read.close();
    }
  }
}

/** Takes every write lock, starts a read transaction on every reader, lets the locks go; returns how long they were held. */
function startSnapshots(locks: Database.Database[], readers: Database.Database[], options: SnapshotOptions): number {
  const attempts = options.attempts ?? 10;
  const sleep = options.sleep ?? sleepSync;
  for (let attempt = 1; ; attempt++) {
    const held: Database.Database[] = [];
    let since = 0;
    try {
      for (const lock of locks) {
        lock.exec('BEGIN IMMEDIATE');
        if (held.push(lock) === 1) since = performance.now();
      }
      // No process can commit to any of the files now: each reader's snapshot is of this instant.
      for (const reader of readers) {
        reader.exec('BEGIN');
        reader.prepare('SELECT count(*) FROM sqlite_master').get();
      }
      return performance.now() - since;
    } catch (error) {
      for (const reader of readers) if (reader.inTransaction) reader.exec('ROLLBACK');
      if (!busy(error)) throw error;
      if (attempt >= attempts) {
        throw new SnapshotError(`another process kept writing: the write locks of all ${locks.length} files could not be held at once in ${attempts} attempts`);
      }
    } finally {
      for (const lock of held) lock.exec('ROLLBACK');
    }
    sleep(Math.min(25 * 2 ** attempt, 1_000) * (0.5 + Math.random() / 2));
  }
}

const busy = (error: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: unknown }).code));

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

interface SchemaEntry {
  type: 'table' | 'index' | 'view' | 'trigger';
  name: string;
  sql: string;
}

/** Copies what `source`'s open read transaction sees into `target`, checked; returns the rows per table and the size. */
function copyDatabase(source: Database.Database, target: string): Omit<CopiedDatabase, 'source' | 'target'> {
  const partial = `${target}.partial`;
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(partial + suffix, { force: true });
  const schema = source.prepare('SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid').all() as SchemaEntry[];
  const virtual = schema.find((entry) => /^CREATE\s+VIRTUAL\s+TABLE/i.test(entry.sql));
  if (virtual) throw new SnapshotError(`${virtual.name} is a virtual table, which a row copy cannot reproduce`);
  const tables = schema.filter((entry) => entry.type === 'table' && !entry.name.startsWith('sqlite_'));
  const withoutRowid = new Set(source.prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND wr = 1").pluck().all() as string[]);
  // A copy holds what the store holds: its owner's only (SQLite gives its -wal and -shm the same mode).
  closeSync(openSync(partial, 'wx', 0o600));
  const copy = new Database(partial);
  const tableRows: Record<string, number> = {};
  try {
    // File settings that must precede the first table; journal and syncs off while it is built, as one transaction into a new file.
    copy.pragma(`page_size = ${Number(source.pragma('page_size', { simple: true }))}`);
    copy.pragma(`auto_vacuum = ${Number(source.pragma('auto_vacuum', { simple: true }))}`);
    copy.pragma(`user_version = ${Number(source.pragma('user_version', { simple: true }))}`);
    copy.pragma(`application_id = ${Number(source.pragma('application_id', { simple: true }))}`);
    copy.pragma('journal_mode = OFF');
    copy.pragma('synchronous = OFF');
    copy.transaction(() => {
      for (const table of tables) copy.exec(table.sql);
      for (const table of tables) tableRows[table.name] = copyRows(source, copy, table.name, withoutRowid.has(table.name));
      // AUTOINCREMENT's high-water marks: a restored bus must not hand out again offsets its groups have committed past.
      if (schema.some((entry) => entry.name === 'sqlite_sequence')) {
        copy.exec('DELETE FROM sqlite_sequence');
        const insert = copy.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)');
        for (const [name, seq] of source.prepare('SELECT name, seq FROM sqlite_sequence').raw().safeIntegers().all() as Array<[string, bigint]>) insert.run(name, seq);
      }
      for (const type of ['index', 'view', 'trigger']) {
        for (const entry of schema) if (entry.type === type) copy.exec(entry.sql);
      }
    })();
    // The product's files are in WAL mode (openSqliteDatabase); the mode is kept in the file.
    copy.pragma('journal_mode = WAL');
    verify(source, copy, target, tableRows);
    copy.close();
    syncFile(partial);
  } catch (error) {
    copy.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true });
    throw error;
  }
  renameSync(partial, target);
  syncFile(dirname(target));
  return { tables: tableRows, rows: Object.values(tableRows).reduce((sum, n) => sum + n, 0), bytes: statSync(target).size };
}

/** Copies a table's rows (rowids too, which a table without an INTEGER PRIMARY KEY would otherwise renumber); returns how many. */
function copyRows(source: Database.Database, target: Database.Database, table: string, withoutRowid: boolean): number {
  // hidden 0: stored columns; generated ones are computed again by the copy
  const columns = source.prepare('SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0').pluck().all(table) as string[];
  const taken = new Set(columns.map((column) => column.toLowerCase()));
  // the rowid under a name no column of the table has taken
  const rowid = withoutRowid ? undefined : ['_rowid_', 'rowid', 'oid'].find((name) => !taken.has(name));
  const copied = [...(rowid ? [rowid] : []), ...columns.map(quoted)];
  const insert = target.prepare(`INSERT INTO ${quoted(table)} (${copied.join(', ')}) VALUES (${copied.map(() => '?').join(', ')})`);
  // safeIntegers: 64-bit integers beyond 2^53 come through exactly
  const rows = source.prepare(`SELECT ${copied.join(', ')} FROM ${quoted(table)}`).raw().safeIntegers();
  let count = 0;
  for (const row of rows.iterate() as IterableIterator<unknown[]>) {
    insert.run(row);
    count++;
  }
  return count;
}

/** The copy is whole and holds what the snapshot held: SQLite's integrity check, the rows of every table, the AUTOINCREMENT counters. */
function verify(source: Database.Database, copy: Database.Database, target: string, tableRows: Record<string, number>): void {
  const integrity = copy.pragma('integrity_check', { simple: false }) as Array<{ integrity_check: string }>;
  if (integrity.length !== 1 || integrity[0].integrity_check !== 'ok') {
    throw new SnapshotError(`the copy ${target} fails SQLite's integrity check: ${integrity.map((row) => row.integrity_check).join('; ')}`);
  }
  const count = (db: Database.Database, table: string) => Number(db.prepare(`SELECT count(*) FROM ${quoted(table)}`).pluck().get());
  for (const [table, copied] of Object.entries(tableRows)) {
    const expected = count(source, table);
    const found = count(copy, table);
    if (copied !== expected || found !== expected) throw new SnapshotError(`the copy ${target} holds ${found} rows of ${table}, the snapshot ${expected}`);
  }
  const sequences = (db: Database.Database) =>
    db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").get()
      ? (db.prepare('SELECT name, seq FROM sqlite_sequence ORDER BY name').raw().safeIntegers().all() as Array<[string, bigint]>).map(([name, seq]) => `${name}=${seq}`).join(', ')
      : '';
  if (sequences(source) !== sequences(copy)) throw new SnapshotError(`the copy ${target} has other AUTOINCREMENT counters than the snapshot`);
}

/** Puts a file's (or directory's) content on disk, so a backup reported done survives a power loss. */
function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
