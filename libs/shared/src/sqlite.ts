import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import { LruMap } from './lru-map';

export interface SqliteOptions {
  /** How long a writer waits for another process holding the write lock. */
  busyTimeoutMs: number;
  /** `FULL` syncs every commit; `NORMAL` keeps every commit across a process crash (WAL). */
  synchronous: 'NORMAL' | 'FULL';
}

/**
 * Opens one of the embedded stores' SQLite files (its directory is created if missing) in WAL
 * mode. The WAL is copied back into the database by a background thread (see
 * BackgroundCheckpoints), not by whichever commit happens to fill it: that copy and its fsync
 * held up the event loop for milliseconds at a time. Close it with closeSqliteDatabase.
 */
export function openSqliteDatabase(file: string, options: SqliteOptions): Database.Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { timeout: options.busyTimeoutMs });
  // Turning a new file to WAL takes an exclusive lock; when two processes open a new DATA_DIR at
  // once, SQLite refuses one of them at once instead of waiting (its busy handler is not called
  // where waiting could deadlock), so the wait is here.
  retryWhileBusy(() => db.pragma('journal_mode = WAL'), options.busyTimeoutMs);
  db.pragma(`synchronous = ${options.synchronous}`);
  db.pragma(`busy_timeout = ${Math.floor(options.busyTimeoutMs)}`);
  if (file !== ':memory:') backgroundCheckpoints.add(db, file);
  return db;
}

/**
 * Whether the WAL of the connection's file is checkpointed by the background thread: another
 * connection to the same file then turns SQLite's automatic checkpoints off as well.
 */
export function checkpointedInBackground(db: Database.Database): boolean {
  return backgroundCheckpoints.covers(db);
}

const pause = new Int32Array(new SharedArrayBuffer(4));
const sleepSync = (ms: number) => void Atomics.wait(pause, 0, 0, ms);

/** Runs `work` again while it fails with SQLITE_BUSY, every few milliseconds for up to `timeoutMs`. */
export function retryWhileBusy<T>(work: () => T, timeoutMs: number, sleep: (ms: number) => void = sleepSync, now: () => number = Date.now): T {
  const deadline = now() + timeoutMs;
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    try {
      return work();
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || now() >= deadline) throw error;
      sleep(wait);
    }
  }
}

/**
 * `LIMIT <count>` with the number written into the SQL text. SQLite as better-sqlite3 builds it
 * (SQLITE_ENABLE_STAT4) lets a LIMIT's value steer the plan, so a statement whose LIMIT is a bound
 * parameter is compiled again on every run after its parameters are bound, and better-sqlite3
 * binds them on every run: 10–20 µs per query on this VM, more than the query itself. Callers
 * keep one prepared statement per count, in a bounded cache.
 */
export function limitClause(count: number): string {
  if (!Number.isSafeInteger(count)) throw new RangeError(`a LIMIT must be an integer, got ${count}`);
  return `LIMIT ${count}`;
}

/**
 * The prepared statements of one connection, one per SQL text. Past `capacity` texts the least
 * recently used is dropped: SQL that carries values (limitClause) or table names makes many.
 */
export class PreparedStatements {
  private readonly cache: LruMap<string, Database.Statement>;

  constructor(
    private readonly db: Database.Database,
    capacity: number,
  ) {
    this.cache = new LruMap(capacity);
  }

  get(sql: string): Database.Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }

  /** Drops the statements whose SQL contains `text`, e.g. those of a dropped table. */
  forget(text: string): void {
    for (const sql of this.cache.keys()) if (sql.includes(text)) this.cache.delete(sql);
  }
}

export function closeSqliteDatabase(db: Database.Database): void {
  backgroundCheckpoints.remove(db);
  if (db.open) db.close();
}

/** A WAL past this size is checkpointed; SQLite's own default is 1,000 pages of 4 KiB. */
const CHECKPOINT_AT_BYTES = 4 * 1024 * 1024;
/** A WAL past this size is started again by force (the thread's startAgain). */
const RESTART_AT_BYTES = 64 * 1024 * 1024;
/** Passive passes before the RESTART, ended early once a pass saw less than RESTART_TAIL_BYTES committed. */
const RESTART_PASSES = 3;
const RESTART_TAIL_BYTES = 4 * 1024 * 1024;
/** How long the RESTART waits for the write lock and for readers of older snapshots; then the next round tries again. */
const RESTART_WAIT_MS = 50;
/** A RESTART that found the store busy is tried again after twice as long each time, up to this. */
const MAX_RESTART_BACKOFF_MS = 10_000;
const CHECK_EVERY_MS = 200;
const KEPT_WAL_BYTES = 16 * 1024 * 1024;
/** SQLite's default, restored where the thread cannot do the work. */
const AUTOMATIC_CHECKPOINT_PAGES = 1000;

/**
 * One thread per process that checkpoints the WAL of every open store file with a connection of
 * its own. PASSIVE checkpoints never wait for or block readers and writers; a commit that finds
 * the WAL fully checkpointed starts it again from its beginning, so it does not grow without
 * end. Durability is unchanged: a checkpoint copies committed pages, syncing the WAL before and
 * the database after. Should the thread fail, the connections go back to SQLite's automatic
 * checkpoints.
 */
class BackgroundCheckpoints {
  private readonly logger = new Logger('SqliteCheckpoints');
  /** every open connection and its file; the thread has one connection per file of them */
  private readonly connections = new Map<Database.Database, string>();
  private worker: Worker | null = null;

  add(db: Database.Database, file: string): void {
    const path = resolve(file);
    if (!this.start()) return;
    db.pragma('wal_autocheckpoint = 0');
    // A WAL that grew during a burst is cut back to this when a commit starts it again.
    db.pragma(`journal_size_limit = ${KEPT_WAL_BYTES}`);
    if (!this.isOpen(path)) this.worker!.postMessage({ add: path });
    this.connections.set(db, path);
  }

  remove(db: Database.Database): void {
    const path = this.connections.get(db);
    if (path === undefined) return;
    this.connections.delete(db);
    if (this.isOpen(path)) return;
    this.worker?.postMessage({ remove: path });
    if (this.connections.size === 0) this.stop();
  }

  covers(db: Database.Database): boolean {
    return this.worker !== null && this.connections.has(db);
  }

  private isOpen(path: string): boolean {
    for (const open of this.connections.values()) if (open === path) return true;
    return false;
  }

  private start(): boolean {
    if (this.worker) return true;
    try {
      this.worker = new Worker(CHECKPOINTER_SOURCE, {
        eval: true,
        workerData: {
          driver: require.resolve('better-sqlite3'),
          checkpointAtBytes: CHECKPOINT_AT_BYTES,
          checkEveryMs: CHECK_EVERY_MS,
          restartAtBytes: RESTART_AT_BYTES,
          restartPasses: RESTART_PASSES,
          restartTailBytes: RESTART_TAIL_BYTES,
          restartWaitMs: RESTART_WAIT_MS,
          maxRestartBackoffMs: MAX_RESTART_BACKOFF_MS,
        },
      });
    } catch (error) {
      this.logger.warn(`no checkpoint thread (${String(error)}); SQLite checkpoints on commit`);
      return false;
    }
    // The thread never keeps the process alive: the stores' own work does.
    this.worker.unref();
    const worker = this.worker;
    worker.on('error', (error) => this.failed(worker, error));
    worker.on('exit', (code) => this.failed(worker, new Error(`exited with ${code}`)));
    return true;
  }

  private stop(): void {
    const worker = this.worker;
    this.worker = null;
    void worker?.terminate();
  }

  private failed(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.logger.error(`the checkpoint thread failed (${error.message}); SQLite checkpoints on commit again`);
    for (const db of this.connections.keys()) if (db.open) db.pragma(`wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
    this.connections.clear();
  }
}

const backgroundCheckpoints = new BackgroundCheckpoints();

const CHECKPOINTER_SOURCE = `
const { statSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const open = new Map();
parentPort.on('message', (message) => {
  if (message.add && !open.has(message.add)) {
    try {
      const db = new Database(message.add, { timeout: 0, fileMustExist: true });
      db.pragma('wal_autocheckpoint = 0');
      open.set(message.add, db);
    } catch {
      // Gone already (its store closed and its directory removed): nothing to checkpoint.
    }
  }
  if (message.remove && open.has(message.remove)) {
    open.get(message.remove).close();
    open.delete(message.remove);
    checkpointedAt.delete(message.remove);
    restartBackoff.delete(message.remove);
  }
});
// The WAL's modification time when it was last checkpointed: a checkpoint does not write the WAL.
const checkpointedAt = new Map();
const walSize = (file) => statSync(file + '-wal').size;
// Only a commit that finds the WAL wholly copied starts it again from its beginning. Commits that
// never pause leave no such moment, and the WAL grows for as long as they last. RESTART makes one:
// it holds off writers while it copies what is left, then the next commit starts the WAL again and
// cuts the file back to journal_size_limit. Passive passes first copy the bulk while writers carry
// on, so writers wait only for what they added during the last pass; after a few passes they wait
// for whatever is left, which is how writers faster than the copying are slowed to its pace.
// A RESTART that found the store busy (a reader of an older snapshot, e.g. another process in a
// long read, can hold it up) held writers off for up to restartWaitMs: the next one waits longer.
const restartBackoff = new Map();
function startAgain(db, file) {
  const backoff = restartBackoff.get(file);
  if (backoff && Date.now() < backoff.notBefore) return;
  for (let pass = 0; pass < workerData.restartPasses; pass++) {
    const before = walSize(file);
    db.pragma('wal_checkpoint(PASSIVE)');
    if (walSize(file) - before < workerData.restartTailBytes) break;
  }
  db.pragma('busy_timeout = ' + workerData.restartWaitMs);
  let busy;
  try {
    busy = db.pragma('wal_checkpoint(RESTART)')[0].busy !== 0;
  } finally {
    db.pragma('busy_timeout = 0');
  }
  if (!busy) {
    restartBackoff.delete(file);
    return;
  }
  const delayMs = Math.min((backoff?.delayMs ?? workerData.checkEveryMs) * 2, workerData.maxRestartBackoffMs);
  restartBackoff.set(file, { delayMs, notBefore: Date.now() + delayMs });
}
setInterval(() => {
  for (const [file, db] of open) {
    let wal;
    try {
      wal = statSync(file + '-wal');
    } catch {
      continue;
    }
    if (wal.size < workerData.checkpointAtBytes || checkpointedAt.get(file) === wal.mtimeMs) continue;
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
      if (wal.size >= workerData.restartAtBytes) startAgain(db, file);
      checkpointedAt.set(file, wal.mtimeMs);
    } catch {
      // Busy (another process is checkpointing) or closing: the next round tries again.
    }
  }
}, workerData.checkEveryMs);
`;
