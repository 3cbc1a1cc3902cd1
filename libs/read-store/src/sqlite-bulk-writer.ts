import { Worker } from 'node:worker_threads';
import type { BulkWriter, Checkpoint, GuardedUpsert } from './read-store.port';
import { createTableSql, SAVE_CHECKPOINT_SQL, upsertRow } from './sqlite-documents';

export interface SqliteBulkWriterOptions {
  /** the store's database file (not `:memory:`: the writer has a connection of its own) */
  file: string;
  busyTimeoutMs: number;
  synchronous: 'NORMAL' | 'FULL';
  /** whether the process checkpoints this file's WAL on its background thread (then SQLite must not, on commit) */
  checkpointedInBackground: boolean;
}

/** What the thread is sent per write: the tables to create, the statements, and per row its statement's index and parameters. */
interface WriteMessage {
  tables: string[];
  statements: string[];
  rows: Array<number | string | null>;
  checkpoints: Array<[string, number]>;
}

type WriteReply = { applied: number } | { error: { message: string; code?: string } };

/**
 * The embedded read store's bulk writer: the documents are encoded on the caller's thread, and
 * stored by a thread with a connection of its own, each write in one transaction with its
 * checkpoints. A rebuild projects the next page of events while this thread inserts the page
 * before, updates the indexes and commits.
 */
export class SqliteBulkWriter implements BulkWriter {
  readonly atomic = true;
  private readonly worker: Worker;
  private readonly created = new Set<string>();
  private waiting: { resolve: (applied: number) => void; reject: (error: Error) => void; tables: string[] } | null = null;
  /** the write in progress, settled either way */
  private inFlight: Promise<unknown> = Promise.resolve();
  private failure: Error | null = null;
  private readonly exited: Promise<void>;

  constructor(options: SqliteBulkWriterOptions) {
    this.worker = new Worker(WRITER_SOURCE, {
      eval: true,
      workerData: { ...options, driver: require.resolve('better-sqlite3'), saveCheckpoint: SAVE_CHECKPOINT_SQL },
    });
    // The thread keeps the process alive only while it has work: a writer left open does not.
    this.worker.unref();
    this.worker.on('message', (reply: WriteReply) => {
      this.worker.unref();
      const waiting = this.waiting;
      this.waiting = null;
      if ('applied' in reply) {
        // Only a committed write keeps the tables it created: a failed one rolled them back.
        waiting?.tables.forEach((table) => this.created.add(table));
        return waiting?.resolve(reply.applied);
      }
      waiting?.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    });
    this.exited = new Promise((resolve) => {
      this.worker.on('error', (error) => this.fail(error));
      this.worker.on('exit', (code) => {
        this.fail(new Error(`the bulk writer's thread exited (${code})`));
        resolve();
      });
    });
  }

  write(writes: GuardedUpsert[], checkpoints: Checkpoint[]): Promise<number> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.waiting) return Promise.reject(new Error('the bulk writer takes one write at a time'));
    let encoded: { message: WriteMessage; newTables: string[] };
    try {
      encoded = this.encode(writes, checkpoints);
    } catch (error) {
      return Promise.reject(error);
    }
    const written = new Promise<number>((resolve, reject) => {
      this.waiting = { resolve, reject, tables: encoded.newTables };
      this.worker.ref();
      this.worker.postMessage(encoded.message);
    });
    this.inFlight = written.catch(() => undefined);
    return written;
  }

  /** The message for the thread; throws, before anything is sent, on a write the store would refuse. */
  private encode(writes: GuardedUpsert[], checkpoints: Checkpoint[]): { message: WriteMessage; newTables: string[] } {
    const message: WriteMessage = { tables: [], statements: [], rows: [], checkpoints: checkpoints.map(({ name, position }) => [name, position]) };
    const statementIndex = new Map<string, number>();
    const tables = new Set<string>();
    for (const write of writes) {
      const { table, sql, params } = upsertRow(write);
      tables.add(table);
      let index = statementIndex.get(sql);
      if (index === undefined) statementIndex.set(sql, (index = message.statements.push(sql) - 1));
      message.rows.push(index, params[0], params[1], params[2] ?? null);
    }
    const newTables = [...tables].filter((table) => !this.created.has(table));
    message.tables = newTables.map(createTableSql);
    return { message, newTables };
  }

  async close(): Promise<void> {
    await this.inFlight;
    this.worker.ref();
    this.worker.postMessage({ close: true });
    await this.exited;
  }

  private fail(error: Error): void {
    this.failure ??= error;
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.reject(error);
  }
}

const WRITER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs, fileMustExist: true });
db.pragma('synchronous = ' + workerData.synchronous);
if (workerData.checkpointedInBackground) db.pragma('wal_autocheckpoint = 0');
const prepared = new Map();
const statement = (sql) => {
  let found = prepared.get(sql);
  if (!found) prepared.set(sql, (found = db.prepare(sql)));
  return found;
};
const write = db.transaction(({ tables, statements, rows, checkpoints }) => {
  for (const table of tables) db.exec(table);
  const upserts = statements.map(statement);
  let applied = 0;
  for (let i = 0; i < rows.length; i += 4) {
    const upsert = upserts[rows[i]];
    applied += (rows[i + 3] === null ? upsert.run(rows[i + 1], rows[i + 2]) : upsert.run(rows[i + 1], rows[i + 2], rows[i + 3])).changes;
  }
  const save = statement(workerData.saveCheckpoint);
  for (const [name, position] of checkpoints) save.run(name, position);
  return applied;
});
parentPort.on('message', (message) => {
  if (message.close) {
    db.close();
    process.exit(0);
  }
  try {
    parentPort.postMessage({ applied: write.immediate(message) });
  } catch (error) {
    parentPort.postMessage({ error: { message: String(error && error.message), code: error && error.code } });
  }
});
`;
