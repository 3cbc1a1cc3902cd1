import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import Database from 'better-sqlite3';
import { checkpointedInBackground, closeSqliteDatabase, limitClause, openSqliteDatabase, PreparedStatements } from '@lib/shared';
import {
  BulkWriter,
  Filter,
  FindOptions,
  FindResult,
  GuardedUpsert,
  IndexSpec,
  ReadDocument,
  ReadStore,
  SortKey,
} from './read-store.port';
import { readPath } from './document-paths';
import { SqliteBulkWriter } from './sqlite-bulk-writer';
import { createTableSql, fieldSql, jsonSql, SAVE_CHECKPOINT_SQL, TABLE_PREFIX, tableName, upsertRow } from './sqlite-documents';

export interface SqliteReadStoreOptions {
  /** Database file (its directory is created if missing), or `':memory:'` for tests. */
  file: string;
  /** How long a writer waits for another process holding the write lock. */
  busyTimeoutMs?: number;
  /**
   * `NORMAL` (default) keeps every commit across a process crash (WAL); an OS crash or power loss
   * can drop the newest commits. A projection's writes and its checkpoint go together, so replays
   * from the event store restore those; but what guards another file (the outbox relay's
   * checkpoint, webhook deliveries whose bus offsets are committed after them) would be lost, so
   * the product opens its store with `FULL`, which syncs each commit to disk.
   */
  synchronous?: 'NORMAL' | 'FULL';
}

/** Synchronous access to the store inside `SqliteReadStore.transaction`. */
export interface ReadStoreTransaction {
  get<T extends ReadDocument>(collection: string, id: string): T | null;
  upsert(writes: GuardedUpsert[]): number;
  delete(collection: string, id: string): void;
  getCheckpoint(name: string): number | null;
  saveCheckpoint(name: string, position: number): void;
}

const MAX_CACHED_STATEMENTS = 500;
const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

type SqlValue = string | number | bigint | null;

/** A piece of SQL and the values of its placeholders, in order. */
interface Sql {
  sql: string;
  params: SqlValue[];
}

/**
 * The embedded read-model store: one SQLite table per collection holding JSON documents, with
 * expression indexes on the fields a projection sorts and filters by. Checkpoints live in the
 * same file, so a projection can commit its writes and its position in one transaction.
 */
export class SqliteReadStore extends ReadStore {
  private readonly db: Database.Database;
  private readonly statements: PreparedStatements;
  /** Collections whose table is known to exist. */
  private readonly tables = new Set<string>();
  /** Runs reads in one read transaction, so they see the same snapshot. */
  private readonly inSnapshot: <T>(read: () => T) => T;
  /** Writes made through this connection, per table: commits of other connections show in `data_version`. */
  private readonly writesByTable = new Map<string, number>();
  private readonly dataVersion: Database.Statement;
  private dataVersionOfCallback: number | null = null;
  private readonly walIndex: WalIndexHeader | null;
  /** `data_version` as last read, and the WAL-index header read just before it */
  private lastDataVersion: { value: number; header: Buffer } | null = null;
  /** The last token given per collection: the same string while nothing changed, so a request allocates none and compares by identity. */
  private readonly tokens = new Map<string, { table: string; version: number; writes: number; token: string }>();
  private readonly tx: ReadStoreTransaction = {
    get: <T extends ReadDocument>(collection: string, id: string) => this.getNow<T>(collection, id),
    upsert: (writes) => this.upsertNow(writes),
    delete: (collection, id) => this.deleteNow(collection, id),
    getCheckpoint: (name) => this.getCheckpointNow(name),
    saveCheckpoint: (name, position) => this.saveCheckpointNow(name, position),
  };

  constructor(private readonly options: SqliteReadStoreOptions) {
    super();
    this.db = openSqliteDatabase(options.file, { busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS, synchronous: options.synchronous ?? 'NORMAL' });
    this.statements = new PreparedStatements(this.db, MAX_CACHED_STATEMENTS);
    this.db.exec('CREATE TABLE IF NOT EXISTS read_checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL)');
    this.inSnapshot = this.db.transaction((read: () => unknown) => read()).deferred as <T>(read: () => T) => T;
    this.dataVersion = this.db.prepare('PRAGMA data_version').pluck();
    this.walIndex = options.file === ':memory:' ? null : WalIndexHeader.open(`${options.file}-shm`);
  }

  /**
   * `data_version` changes when another connection (another process, or another store on the
   * same file) commits; the table's own counter when this connection writes to it. Writes of a
   * transaction that rolls back count as well, which costs a needless re-read at most.
   */
  override changeToken(collection: string): string {
    const version = this.currentDataVersion();
    let kept = this.tokens.get(collection);
    if (kept === undefined) this.tokens.set(collection, (kept = { table: tableName(collection), version: -1, writes: -1, token: '' }));
    const writes = this.writesByTable.get(kept.table) ?? 0;
    if (kept.version !== version || kept.writes !== writes) {
      kept.version = version;
      kept.writes = writes;
      kept.token = `${version}:${writes}`;
    }
    return kept.token;
  }

  /**
   * Read at most once per callback of the event loop: each read starts a WAL read transaction,
   * which costs system calls, and a request asks for several tokens at once. Whatever uses the
   * value before it is forgotten runs in this callback, for a request that arrived before the
   * value was read, so a commit the client saw before sending that request is in it. (Forgotten
   * at the next turn instead, a value read in a timer could be used by a request that arrived
   * after another process committed.)
   */
  private currentDataVersion(): number {
    if (this.dataVersionOfCallback === null) {
      this.dataVersionOfCallback = this.readDataVersion();
      queueMicrotask(this.forgetDataVersion);
    }
    return this.dataVersionOfCallback;
  }

  /**
   * `PRAGMA data_version` starts a read transaction: three system calls of locking and a stat.
   * Every commit, of any connection, rewrites the WAL-index header; while that header is the same
   * as before the last read of `data_version`, nothing was committed since and the value stands,
   * which one read of the header (one system call) tells.
   */
  private readDataVersion(): number {
    const walIndex = this.walIndex;
    const last = this.lastDataVersion;
    if (walIndex !== null && last !== null && walIndex.matches(last.header)) return last.value;
    // The header as `matches` has just read it (a write-heavy load misses on most requests: one
    // system call, not two), or read now when there was nothing to compare it with.
    const header = walIndex === null ? null : last === null ? walIndex.read() : walIndex.lastRead();
    // Read after the header: a commit in between only makes the next check read again.
    const value = this.dataVersion.get() as number;
    this.lastDataVersion = header === null ? null : { value, header: Buffer.from(header) };
    return value;
  }

  private readonly forgetDataVersion = (): void => {
    this.dataVersionOfCallback = null;
  };

  private wrote(table: string): void {
    this.writesByTable.set(table, (this.writesByTable.get(table) ?? 0) + 1);
  }

  /**
   * Runs `work` in one write transaction: all of its writes commit together, or none do. The work
   * is synchronous (the transaction cannot span an await).
   */
  transaction<T>(work: (tx: ReadStoreTransaction) => T): T {
    try {
      return this.db.transaction(work).immediate(this.tx);
    } catch (error) {
      // A table created inside the rolled-back transaction no longer exists.
      this.tables.clear();
      throw error;
    }
  }

  /**
   * A file's writer stores on a thread of its own (SqliteBulkWriter); an in-memory store's writes
   * each commit here, with their checkpoints, before `write` returns.
   */
  override openBulkWriter(): BulkWriter {
    if (this.options.file !== ':memory:') {
      return new SqliteBulkWriter({
        file: this.options.file,
        busyTimeoutMs: this.options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
        synchronous: this.options.synchronous ?? 'NORMAL',
        checkpointedInBackground: checkpointedInBackground(this.db),
      });
    }
    return {
      atomic: true,
      write: async (writes, checkpoints) =>
        this.transaction((tx) => {
          const applied = tx.upsert(writes);
          for (const { name, position } of checkpoints) tx.saveCheckpoint(name, position);
          return applied;
        }),
      close: async () => undefined,
    };
  }

  async ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<void> {
    const table = tableName(collection);
    this.transaction(() => {
      this.ensureTable(collection);
      for (const index of indexes) {
        if (index.fields.length === 0) throw new Error('an index needs at least one field');
        if (index.unique && index.include?.length) throw new Error('a unique index cannot include fields');
        // Included fields are trailing index columns, spelled as findJson selects them: SQLite then reads them from the index.
        const columns = [
          ...index.fields.map(({ field, direction }) => `${fieldSql(field)} ${directionSql(direction)}`),
          ...(index.include ?? []).map(jsonSql),
        ];
        const digest = createHash('sha256').update(JSON.stringify(index)).digest('hex').slice(0, 16);
        this.db.exec(
          `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS "${table}__${digest}" ON "${table}" (${columns.join(', ')})`,
        );
      }
    });
  }

  async get<T extends ReadDocument>(collection: string, id: string): Promise<T | null> {
    return this.getNow<T>(collection, id);
  }

  async find<T extends ReadDocument>(collection: string, options: FindOptions): Promise<FindResult<T>> {
    const rows = this.findRows(collection, ['doc'], options);
    const items = rows.slice(0, options.limit).map(([doc]) => JSON.parse(doc as string) as T);
    const last = items[items.length - 1];
    const nextAfter = rows.length > options.limit ? sortKeys(options).map(({ field }) => readPath(last, field) ?? null) : null;
    return { items, nextAfter };
  }

  async findJson(collection: string, field: string, options: FindOptions): Promise<FindResult<string>> {
    const keys = sortKeys(options).map(({ field: key }) => fieldSql(key));
    const rows = this.findRows(collection, [jsonSql(field), ...keys], options);
    const page = rows.slice(0, options.limit);
    const items = page.map(([json]) => (json as string | null) ?? 'null');
    // The sort keys as SQLite compares them, which is how keysetSql reads them back.
    const nextAfter = rows.length > options.limit ? page[page.length - 1].slice(1) : null;
    return { items, nextAfter };
  }

  /** Up to `limit + 1` rows of `columns` in sort order after `options.after`; one more row than asked means more follow. */
  private findRows(collection: string, columns: string[], options: FindOptions): unknown[][] {
    const table = tableName(collection);
    const { limit, after } = options;
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
    const sort = sortKeys(options);
    if (after && after.length !== sort.length) {
      throw new RangeError(`after holds ${after.length} values for ${sort.length} sort keys`);
    }
    const filter = filterSql(options.filter);
    const orderBy = sort.map(({ field, direction }) => `${fieldSql(field)} ${directionSql(direction)}`).join(', ');
    const select = (conditions: Sql[], count: number): unknown[][] =>
      this.statements.get(`SELECT ${columns.join(', ')} FROM "${table}"${whereClause(conditions)} ORDER BY ${orderBy} ${limitClause(count)}`)
        .raw(true)
        .all(...conditions.flatMap((condition) => condition.params)) as unknown[][];

    return this.readTable(collection, [] as unknown[][], () => {
      if (!after) return select(filter, limit + 1);
      const keyset = keysetSql(sort, after);
      const first = fieldSql(sort[0].field);
      const firstValue = sqlValue(after[0]);
      // Bounding the first key lets SQLite seek in the index instead of scanning from its start.
      if (sort[0].direction === 'asc') {
        const seek = firstValue === null ? [] : [{ sql: `${first} >= ?`, params: [firstValue] }];
        return select([...filter, keyset, ...seek], limit + 1);
      }
      if (firstValue === null) return select([...filter, keyset, { sql: `${first} IS NULL`, params: [] }], limit + 1);
      // Descending, missing values come last: seek through the values, then read the missing ones,
      // both in one snapshot.
      return this.inSnapshot(() => {
        const found = select([...filter, keyset, { sql: `${first} <= ?`, params: [firstValue] }], limit + 1);
        if (found.length > limit) return found;
        return found.concat(select([...filter, { sql: `${first} IS NULL`, params: [] }], limit + 1 - found.length));
      });
    });
  }

  async count(collection: string, filter?: Filter): Promise<number> {
    const table = tableName(collection);
    const where = filterSql(filter);
    return this.readTable(collection, 0, () =>
      this.statements.get(`SELECT COUNT(*) FROM "${table}"${whereClause(where)}`)
        .pluck()
        .get(...where.flatMap((condition) => condition.params)) as number,
    );
  }

  async upsert(writes: GuardedUpsert[], checkpoint?: { name: string; position: number }): Promise<number> {
    return this.transaction((tx) => {
      const applied = tx.upsert(writes);
      if (checkpoint) tx.saveCheckpoint(checkpoint.name, checkpoint.position);
      return applied;
    });
  }

  async delete(collection: string, id: string): Promise<void> {
    this.deleteNow(collection, id);
  }

  async dropCollection(collection: string): Promise<void> {
    const table = tableName(collection);
    this.db.exec(`DROP TABLE IF EXISTS "${table}"`);
    this.wrote(table);
    this.forget(collection);
    this.tokens.delete(collection);
  }

  async listCollections(): Promise<string[]> {
    const tables = this.statements.get(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, ${TABLE_PREFIX.length}) = '${TABLE_PREFIX}' ORDER BY name`,
    )
      .pluck()
      .all() as string[];
    return tables.map((table) => table.slice(TABLE_PREFIX.length));
  }

  async getCheckpoint(name: string): Promise<number | null> {
    return this.getCheckpointNow(name);
  }

  async saveCheckpoint(name: string, position: number): Promise<void> {
    this.saveCheckpointNow(name, position);
  }

  async saveCheckpoints(checkpoints: Array<{ name: string; position: number }>): Promise<void> {
    this.transaction((tx) => {
      for (const { name, position } of checkpoints) tx.saveCheckpoint(name, position);
    });
  }

  async deleteCheckpoints(names: string[]): Promise<void> {
    const remove = this.statements.get('DELETE FROM read_checkpoints WHERE name = ?');
    this.transaction(() => {
      for (const name of names) remove.run(name);
    });
  }

  async close(): Promise<void> {
    this.walIndex?.close();
    closeSqliteDatabase(this.db);
  }

  private getNow<T extends ReadDocument>(collection: string, id: string): T | null {
    const table = tableName(collection);
    const doc = this.readTable(collection, undefined, () =>
      this.statements.get(`SELECT doc FROM "${table}" WHERE id = ?`).pluck().get(id) as string | undefined,
    );
    return doc === undefined ? null : (JSON.parse(doc) as T);
  }

  private upsertNow(writes: GuardedUpsert[]): number {
    let applied = 0;
    for (const write of writes) {
      const { table, sql, params } = upsertRow(write);
      this.ensureTable(write.collection);
      this.wrote(table);
      applied += this.statements.get(sql).run(...params).changes;
    }
    return applied;
  }

  private deleteNow(collection: string, id: string): void {
    const table = tableName(collection);
    this.wrote(table);
    this.readTable(collection, undefined, () => this.statements.get(`DELETE FROM "${table}" WHERE id = ?`).run(id));
  }

  private getCheckpointNow(name: string): number | null {
    const position = this.statements.get('SELECT position FROM read_checkpoints WHERE name = ?').pluck().get(name);
    return position === undefined ? null : (position as number);
  }

  private saveCheckpointNow(name: string, position: number): void {
    this.statements.get(SAVE_CHECKPOINT_SQL).run(name, position);
  }

  private ensureTable(collection: string): void {
    if (this.tables.has(collection)) return;
    this.db.exec(createTableSql(tableName(collection)));
    this.tables.add(collection);
  }

  /** Runs a statement on a collection's table; a collection that does not exist reads as empty. */
  private readTable<T>(collection: string, empty: T, read: () => T): T {
    if (!this.tables.has(collection)) {
      const exists = this.statements.get("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(tableName(collection));
      if (!exists) return empty;
      this.tables.add(collection);
    }
    try {
      return read();
    } catch (error) {
      // Another process dropped the collection since we last looked. (Not `instanceof`: the
      // native module may raise errors from another realm, as under Jest.)
      if (String((error as { message?: unknown } | null)?.message).startsWith('no such table')) {
        this.forget(collection);
        return empty;
      }
      throw error;
    }
  }

  private forget(collection: string): void {
    this.tables.delete(collection);
    const quoted = `"${tableName(collection)}"`;
    this.statements.forget(quoted);
  }
}

function sortKeys(options: FindOptions): SortKey[] {
  return options.sort.length > 0 ? options.sort : [{ field: 'id', direction: 'asc' }];
}

function directionSql(direction: string): string {
  if (direction !== 'asc' && direction !== 'desc') throw new Error(`invalid sort direction "${direction}"`);
  return direction === 'asc' ? 'ASC' : 'DESC';
}

function whereClause(conditions: Sql[]): string {
  return conditions.length > 0 ? ` WHERE ${conditions.map((condition) => condition.sql).join(' AND ')}` : '';
}

/** Filter conditions, to be ANDed. */
function filterSql(filter: Filter | undefined): Sql[] {
  const conditions: Sql[] = [];
  for (const [field, condition] of Object.entries(filter ?? {})) {
    if (condition === undefined) continue;
    const column = fieldSql(field);
    if (condition === null) {
      conditions.push({ sql: `${column} IS NULL`, params: [] });
    } else if (typeof condition === 'boolean') {
      // json_extract reads true as 1: check the JSON type so `true` does not match the number 1.
      conditions.push({ sql: `${column} = ? AND json_type(doc, '$.${field}') = '${condition}'`, params: [condition ? 1 : 0] });
    } else if (typeof condition !== 'object') {
      conditions.push({ sql: `${column} = ?`, params: [condition] });
    } else {
      conditions.push(...rangeSql(column, condition));
    }
  }
  return conditions;
}

const RANGE_OPERATORS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function rangeSql(column: string, condition: Exclude<Filter[string], null | string | number | boolean>): Sql[] {
  const conditions: Sql[] = [];
  const types = new Set<string>();
  for (const [operator, value] of Object.entries(condition)) {
    if (value === undefined) continue;
    if (operator === 'in') {
      if (!Array.isArray(value)) throw new Error('the in operator takes an array');
      conditions.push(
        value.length === 0
          ? { sql: '0', params: [] }
          : { sql: `${column} IN (${value.map(() => '?').join(', ')})`, params: value as Array<string | number> },
      );
    } else if (operator in RANGE_OPERATORS) {
      if (typeof value !== 'number' && typeof value !== 'string') throw new Error(`${operator} takes a number or a string`);
      conditions.push({ sql: `${column} ${RANGE_OPERATORS[operator as keyof typeof RANGE_OPERATORS]} ?`, params: [value] });
      types.add(typeof value);
    } else {
      throw new Error(`unsupported filter operator "${operator}"`);
    }
  }
  // SQLite orders every number before every string; a numeric range must not match strings, nor the reverse.
  if (types.has('number')) conditions.push({ sql: `typeof(${column}) IN ('integer', 'real')`, params: [] });
  if (types.has('string')) conditions.push({ sql: `typeof(${column}) = 'text'`, params: [] });
  return conditions;
}

/**
 * Rows strictly after `after` in the sort order: tied on the first i keys and beyond on key i,
 * for some i. SQLite puts NULL (a missing field) first in an ascending key and last in a
 * descending one; the comparisons follow the same order.
 */
function keysetSql(sort: SortKey[], after: unknown[]): Sql {
  const branches: Sql[] = [];
  const tied: Sql[] = [];
  sort.forEach(({ field, direction }, i) => {
    const column = fieldSql(field);
    const value = sqlValue(after[i]);
    let beyond: Sql | null;
    if (direction === 'asc') {
      beyond = value === null ? { sql: `${column} IS NOT NULL`, params: [] } : { sql: `${column} > ?`, params: [value] };
    } else {
      beyond = value === null ? null : { sql: `(${column} < ? OR ${column} IS NULL)`, params: [value] };
    }
    if (beyond) branches.push(allOf([...tied, beyond]));
    tied.push(value === null ? { sql: `${column} IS NULL`, params: [] } : { sql: `${column} = ?`, params: [value] });
  });
  if (branches.length === 0) return { sql: '0', params: [] };
  return { sql: `(${branches.map((branch) => branch.sql).join(' OR ')})`, params: branches.flatMap((branch) => branch.params) };
}

function allOf(conditions: Sql[]): Sql {
  return { sql: `(${conditions.map((c) => c.sql).join(' AND ')})`, params: conditions.flatMap((c) => c.params) };
}

/** A document value as SQLite sees it through json_extract. */
function sqlValue(value: unknown): SqlValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint') return value;
  return JSON.stringify(value);
}

/** Size of the WAL-index header; the `-shm` file holds it twice, at offsets 0 and 48. */
const WAL_INDEX_HEADER_BYTES = 48;

/**
 * The header of a database's WAL index (the `-shm` file, https://sqlite.org/walformat.html):
 * a committing connection rewrites it, both copies, before its commit returns, and since it
 * counts the WAL's frames and carries the last frame's checksum, no commit leaves it as it was.
 * Read as SQLite's own readers read it: both copies, and only when they agree (a writer updates
 * them one after the other). The file is SQLite's; this only reads it.
 */
export class WalIndexHeader {
  private readonly both = Buffer.alloc(2 * WAL_INDEX_HEADER_BYTES);
  /** Whether the last read gave two copies that agree. */
  private agreed = false;

  private constructor(private fd: number | null) {}

  /** null when the file cannot be read (then every check reads `data_version`). */
  static open(file: string): WalIndexHeader | null {
    try {
      return new WalIndexHeader(openSync(file, 'r'));
    } catch {
      return null;
    }
  }

  /** The header, or null while the two copies differ or the file cannot be read. Valid until the next read. */
  read(): Buffer | null {
    this.readBoth();
    return this.lastRead();
  }

  /** What the last `read` or `matches` read, as `read` gives it, without reading again. */
  lastRead(): Buffer | null {
    return this.agreed ? this.both.subarray(0, WAL_INDEX_HEADER_BYTES) : null;
  }

  /** Whether the header now is `previous` (a copy of what `read` gave); false when it cannot be read. Allocates nothing: it runs on every request. */
  matches(previous: Buffer): boolean {
    return this.readBoth() && this.both.compare(previous, 0, WAL_INDEX_HEADER_BYTES, 0, WAL_INDEX_HEADER_BYTES) === 0;
  }

  /** Reads both copies; true when they agree. */
  private readBoth(): boolean {
    this.agreed = false;
    if (this.fd === null) return false;
    try {
      if (readSync(this.fd, this.both, 0, this.both.length, 0) !== this.both.length) return false;
    } catch {
      return false;
    }
    this.agreed = this.both.compare(this.both, WAL_INDEX_HEADER_BYTES, 2 * WAL_INDEX_HEADER_BYTES, 0, WAL_INDEX_HEADER_BYTES) === 0;
    return this.agreed;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
