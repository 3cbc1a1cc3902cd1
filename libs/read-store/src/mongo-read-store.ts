import { createHash, randomUUID } from 'node:crypto';
import { AnyBulkWriteOperation, ClientSession, Collection, Db, Document, MongoBulkWriteError, MongoClient, MongoServerError } from 'mongodb';
import {
  Filter,
  FindOptions,
  FindResult,
  GuardedUpsert,
  IndexSpec,
  ReadDocument,
  ReadStore,
  SortKey,
} from './read-store.port';
import { readPath, withPath } from './document-paths';

export interface MongoReadStoreOptions {
  /** `mongodb://host:port/database`; the database defaults to `quoting` when the URL names none. */
  url: string;
  /** Overrides the database named in the URL (tests give each suite its own). */
  database?: string;
  /**
   * `auto` (default) runs an upsert and its checkpoint in one multi-document transaction when the
   * server offers them (a replica set or a sharded cluster); `never` always uses the
   * write-then-compensate path of servers without transactions.
   */
  transactions?: 'auto' | 'never';
}

export const DEFAULT_MONGODB_DATABASE = 'quoting';
/** Read-model collections are `rm_<collection>`: other data in the database (checkpoints, gateway state) is not listed as read models. */
const COLLECTION_PREFIX = 'rm_';
const CHECKPOINTS = 'read_checkpoints';
/** Per-document write locks, on servers whose conditional updates are not atomic. */
const WRITE_LOCKS = 'read_write_locks';
/** A lock of a writer that died lapses after this; no upsert holds its locks nearly as long. */
const WRITE_LOCK_LEASE_MS = 30_000;
/** How long an upsert waits for locks held by other writers before it gives up. */
const WRITE_LOCK_WAIT_MS = 10_000;
const DUPLICATE_KEY = 11000;
const COLLECTION_NAME = /^[a-z][a-z0-9_]*$/;
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const NAMESPACE_NOT_FOUND = 26;

/**
 * BSON types in MongoDB's comparison order, as far as JSON documents use them (null and missing
 * compare as equal and first). A keyset condition "after value v" must also admit the values of
 * the types ordered after v's type, because `$gt` only compares within one type.
 */
const TYPE_ORDER: string[][] = [['double', 'int', 'long'], ['string'], ['object'], ['array'], ['bool']];

/**
 * The read-model store on MongoDB: one collection per read model (`rm_<name>`, the name already
 * carries the projection version, so a rebuild fills `quotes_v2` beside the live `quotes_v1`),
 * documents keyed by `_id` = the document id, indexes created at start-up, and the checkpoints in
 * the same database.
 */
export class MongoReadStore extends ReadStore {
  private readonly checkpoints: Collection<{ _id: string; position: number }>;
  private readonly locks: Collection<{ _id: string; owner: string; until: Date }>;

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
    /** whether the server runs multi-document transactions */
    readonly transactional: boolean,
    /**
     * whether upserts lock their documents first: on a server whose conditional updates are not
     * atomic (FerretDB 1.x), the guards would not stop two concurrent writers otherwise
     */
    readonly locksWrites: boolean,
  ) {
    super();
    this.checkpoints = db.collection(CHECKPOINTS);
    this.locks = db.collection(WRITE_LOCKS);
  }

  static async connect(options: MongoReadStoreOptions): Promise<MongoReadStore> {
    const client = await MongoClient.connect(options.url);
    try {
      const db = client.db(options.database ?? databaseFromUrl(options.url));
      const transactional = options.transactions !== 'never' && (await offersTransactions(db));
      return new MongoReadStore(client, db, transactional, await updatesAreNotAtomic(db));
    } catch (error) {
      await client.close();
      throw error;
    }
  }

  /** The database, for gateway state that lives beside the read models (rate limits, idempotency keys). */
  get database(): Db {
    return this.db;
  }

  async ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<void> {
    const target = this.collection(collection);
    for (const index of indexes) {
      if (index.fields.length === 0) throw new Error('an index needs at least one field');
      if (index.unique && index.include?.length) throw new Error('a unique index cannot include fields');
    }
    const wanted = indexes
      // The _id index already serves the document id, in both directions.
      .filter((index) => !(index.fields.length === 1 && fieldPath(index.fields[0].field) === '_id'))
      .map((index) => ({
        key: Object.fromEntries(index.fields.map(({ field, direction }) => [fieldPath(field), directionValue(direction)])),
        name: `ix_${createHash('sha256').update(JSON.stringify({ fields: index.fields, unique: !!index.unique })).digest('hex').slice(0, 16)}`,
        ...(index.unique ? { unique: true } : {}),
      }));
    if (wanted.length === 0) return;
    // Only the missing ones: every process runs this at start-up, and FerretDB 1.x fails on re-creating an index.
    const existing = new Set((await target.listIndexes().toArray().catch(() => [])).map((index) => index.name as string));
    // MongoDB indexes have no included (non-key) fields: a `findJson` reads `include`d fields from the documents.
    for (const index of wanted) {
      if (existing.has(index.name)) continue;
      await target.createIndex(index.key, { name: index.name, ...(index.unique ? { unique: true } : {}) });
    }
  }

  async get<T extends ReadDocument>(collection: string, id: string): Promise<T | null> {
    const stored = await this.collection(collection).findOne({ _id: id as never });
    return stored ? fromStored<T>(stored) : null;
  }

  async find<T extends ReadDocument>(collection: string, options: FindOptions): Promise<FindResult<T>> {
    const sort = sortKeys(options);
    const found = await this.findStored(collection, options, undefined);
    const items = found.slice(0, options.limit).map((stored) => fromStored<T>(stored));
    const nextAfter = found.length > options.limit ? sort.map(({ field }) => readPath(items[items.length - 1], field) ?? null) : null;
    return { items, nextAfter };
  }

  async findJson(collection: string, field: string, options: FindOptions): Promise<FindResult<string>> {
    const path = fieldPath(field);
    const sort = sortKeys(options);
    const projection = Object.fromEntries([path, ...sort.map(({ field: key }) => fieldPath(key))].map((key) => [key, 1]));
    const found = await this.findStored(collection, options, projection);
    const page = found.slice(0, options.limit);
    const items = page.map((stored) => JSON.stringify(readPath(stored, path) ?? null));
    const nextAfter = found.length > options.limit ? sort.map(({ field: key }) => readPath(page[page.length - 1], fieldPath(key)) ?? null) : null;
    return { items, nextAfter };
  }

  /** Up to `limit + 1` stored documents in sort order after `options.after`; one more than asked means more follow. */
  private async findStored(collection: string, options: FindOptions, projection: Document | undefined): Promise<Document[]> {
    const target = this.collection(collection);
    const { limit, after } = options;
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
    const sort = sortKeys(options);
    if (after && after.length !== sort.length) {
      throw new RangeError(`after holds ${after.length} values for ${sort.length} sort keys`);
    }
    const conditions = [filterQuery(options.filter)];
    if (after) conditions.push(keysetQuery(sort, after));
    return target
      .find(allOf(conditions), projection ? { projection } : {})
      .sort(sort.map(({ field, direction }) => [fieldPath(field), directionValue(direction)] as [string, 1 | -1]))
      .limit(limit + 1)
      .toArray();
  }

  async count(collection: string, filter?: Filter): Promise<number> {
    return this.collection(collection).countDocuments(filterQuery(filter));
  }

  /**
   * With transactions, the writes and the checkpoint commit together. Without them (a standalone
   * server, FerretDB), the writes go first and the checkpoint after; when a write fails the
   * documents this call changed are put back as they were, so a refused call leaves nothing
   * behind, and a crash in between leaves writes whose guards make re-applying them harmless.
   */
  async upsert(writes: GuardedUpsert[], checkpoint?: { name: string; position: number }): Promise<number> {
    for (const { collection, document, guard } of writes) {
      this.collection(collection);
      if (typeof document?.id !== 'string' || document.id === '') throw new TypeError('a document needs a string id');
      if (guard) fieldPath(guard.field);
    }
    if (!this.transactional) {
      const applied = this.locksWrites
        ? await this.whileLocked(writes, () => this.applyWrites(writes, undefined, true))
        : await this.applyWrites(writes, undefined, true);
      if (checkpoint) await this.saveCheckpoint(checkpoint.name, checkpoint.position);
      return applied;
    }
    const session = this.client.startSession();
    try {
      let applied = 0;
      await session.withTransaction(async () => {
        applied = await this.applyWrites(writes, session, false);
        if (checkpoint) await this.checkpoints.updateOne({ _id: checkpoint.name }, { $set: { position: checkpoint.position } }, { upsert: true, session });
      });
      return applied;
    } finally {
      await session.endSession();
    }
  }

  /**
   * Applies the writes of each collection in one ordered bulk write. The guards are decided on
   * the documents as read just before (one read per collection) and stated again in each
   * write's filter, so a concurrent writer can make a write miss, never regress a document.
   */
  private async applyWrites(writes: GuardedUpsert[], session: ClientSession | undefined, compensate: boolean): Promise<number> {
    const byCollection = new Map<string, GuardedUpsert[]>();
    for (const write of writes) {
      const list = byCollection.get(write.collection) ?? [];
      list.push(write);
      byCollection.set(write.collection, list);
    }
    const before = new Map<string, Map<string, Document | null>>();
    let applied = 0;
    try {
      for (const [collection, list] of byCollection) {
        const target = this.collection(collection);
        const ids = [...new Set(list.map((write) => write.document.id))];
        const found = await target.find({ _id: { $in: ids } } as never, { session }).toArray();
        const images = new Map<string, Document | null>(ids.map((id) => [id, null]));
        for (const stored of found) images.set(stored._id as unknown as string, stored);
        const current = new Map(images);
        const operations: AnyBulkWriteOperation<Document>[] = [];
        for (const { document, guard } of list) {
          const stored = current.get(document.id) ?? null;
          if (guard && stored && !guardPasses(readPath(stored, guard.field), guard.value)) continue;
          const replacement = toStored(guard ? withPath(document, guard.field, guard.value) : document);
          const filter: Document = { _id: document.id };
          if (guard && stored) filter.$or = [{ [guard.field]: null }, { [guard.field]: { $lt: guard.value } }];
          operations.push({ replaceOne: { filter, replacement, upsert: stored === null } });
          current.set(document.id, replacement);
        }
        if (operations.length === 0) continue;
        before.set(collection, images);
        const result = await target.bulkWrite(operations, { ordered: true, session });
        applied += result.matchedCount + result.upsertedCount;
      }
    } catch (error) {
      if (compensate) await this.restore(before, error);
      throw error;
    }
    return applied;
  }

  /**
   * Runs `work` holding a lock on every document of `writes`. The locks are taken all at once by
   * inserting one record per document (the unique `_id` makes each insert atomic on any server);
   * when another writer holds some of them, this one gives back what it got and tries again, so
   * two writers never wait on each other. A lock of a writer that died lapses after 30 s.
   */
  private async whileLocked<T>(writes: GuardedUpsert[], work: () => Promise<T>): Promise<T> {
    const ids = [...new Set(writes.map(({ collection, document }) => `${collection}/${document.id}`))];
    if (ids.length === 0) return work();
    const owner = randomUUID();
    const deadline = Date.now() + WRITE_LOCK_WAIT_MS;
    for (let attempt = 0; ; attempt++) {
      const until = new Date(Date.now() + WRITE_LOCK_LEASE_MS);
      try {
        await this.locks.insertMany(ids.map((_id) => ({ _id, owner, until })), { ordered: false });
        break;
      } catch (error) {
        // Refused inserts are the locks another writer holds; anything else is a real failure.
        if (!(error instanceof MongoBulkWriteError) || [error.writeErrors].flat().some((refused) => refused.code !== DUPLICATE_KEY)) throw error;
      }
      await this.locks.deleteMany({ _id: { $in: ids }, owner });
      await this.locks.deleteMany({ _id: { $in: ids }, until: { $lte: new Date() } });
      if (Date.now() > deadline) throw new Error(`documents locked by another writer for ${WRITE_LOCK_WAIT_MS} ms: ${ids.slice(0, 3).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, 2 + attempt * 2) * Math.random()));
    }
    try {
      return await work();
    } finally {
      await this.locks.deleteMany({ _id: { $in: ids }, owner });
    }
  }

  /** Puts the documents a failed upsert may have changed back as they were before it. */
  private async restore(before: Map<string, Map<string, Document | null>>, cause: unknown): Promise<void> {
    try {
      for (const [collection, images] of before) {
        const operations = [...images].map(([id, image]): AnyBulkWriteOperation<Document> => {
          const filter: Document = { _id: id };
          return image === null ? { deleteOne: { filter } } : { replaceOne: { filter, replacement: image, upsert: true } };
        });
        await this.collection(collection).bulkWrite(operations, { ordered: false });
      }
    } catch (error) {
      throw new Error(`an upsert failed (${String(cause)}) and undoing its writes failed too: ${String(error)}`, { cause });
    }
  }

  async delete(collection: string, id: string): Promise<void> {
    await this.collection(collection).deleteOne({ _id: id as never });
  }

  async dropCollection(collection: string): Promise<void> {
    try {
      await this.collection(collection).drop();
    } catch (error) {
      if (!(error instanceof MongoServerError && error.code === NAMESPACE_NOT_FOUND)) throw error;
    }
  }

  async listCollections(): Promise<string[]> {
    const collections = await this.db.listCollections({}, { nameOnly: true }).toArray();
    return collections
      .map(({ name }) => name)
      .filter((name) => name.startsWith(COLLECTION_PREFIX))
      .map((name) => name.slice(COLLECTION_PREFIX.length))
      .sort();
  }

  async getCheckpoint(name: string): Promise<number | null> {
    const stored = await this.checkpoints.findOne({ _id: name });
    return stored ? stored.position : null;
  }

  async saveCheckpoint(name: string, position: number): Promise<void> {
    await this.checkpoints.updateOne({ _id: name }, { $set: { position } }, { upsert: true });
  }

  async saveCheckpoints(checkpoints: Array<{ name: string; position: number }>): Promise<void> {
    if (checkpoints.length === 0) return;
    await this.checkpoints.bulkWrite(
      checkpoints.map(({ name, position }) => ({ updateOne: { filter: { _id: name }, update: { $set: { position } }, upsert: true } })),
      { ordered: true },
    );
  }

  async deleteCheckpoints(names: string[]): Promise<void> {
    if (names.length === 0) return;
    await this.checkpoints.deleteMany({ _id: { $in: names } });
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  private collection(collection: string): Collection<Document> {
    if (typeof collection !== 'string' || !COLLECTION_NAME.test(collection)) {
      throw new Error(`invalid collection name "${collection}": use lower-case letters, digits and _`);
    }
    return this.db.collection(COLLECTION_PREFIX + collection);
  }
}

/** The database named in a MongoDB connection string (`mongodb://h1,h2/name?opts`), else the default. */
export function databaseFromUrl(url: string): string {
  const match = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/.exec(url);
  const name = match ? decodeURIComponent(match[1]) : '';
  return name || DEFAULT_MONGODB_DATABASE;
}

/** The same connection string naming another database. */
export function withDatabase(url: string, database: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?]*)(?:\/([^?]*))?(\?.*)?$/.exec(url);
  if (!match) throw new Error(`not a MongoDB connection string: ${url}`);
  return `${match[1]}/${encodeURIComponent(database)}${match[3] ?? ''}`;
}

/** FerretDB names itself in buildInfo; its conditional updates are a read and a write, not atomic. */
async function updatesAreNotAtomic(db: Db): Promise<boolean> {
  const info = await db.admin().command({ buildInfo: 1 });
  return typeof info.ferretdbVersion === 'string';
}

/** Multi-document transactions need a replica set member or a mongos; a standalone server or FerretDB has none. */
async function offersTransactions(db: Db): Promise<boolean> {
  const hello = await db.admin().command({ hello: 1 });
  return typeof hello.setName === 'string' || hello.msg === 'isdbgrid';
}

function guardPasses(stored: unknown, value: number): boolean {
  return stored === null || stored === undefined || (typeof stored === 'number' && stored < value);
}

function toStored(document: ReadDocument): Document {
  const { id, ...rest } = document;
  return { _id: id, ...rest };
}

function fromStored<T extends ReadDocument>(stored: Document): T {
  const { _id, ...rest } = stored;
  return { id: _id, ...rest } as T;
}

/** The stored path of a document field: the document id is `_id`. */
function fieldPath(field: string): string {
  if (field === 'id') return '_id';
  if (typeof field !== 'string' || !FIELD_PATH.test(field)) throw new Error(`invalid field name "${field}"`);
  return field;
}

function sortKeys(options: FindOptions): SortKey[] {
  return options.sort.length > 0 ? options.sort : [{ field: 'id', direction: 'asc' }];
}

function directionValue(direction: string): 1 | -1 {
  if (direction !== 'asc' && direction !== 'desc') throw new Error(`invalid sort direction "${direction}"`);
  return direction === 'asc' ? 1 : -1;
}

function allOf(conditions: Document[]): Document {
  const present = conditions.filter((condition) => Object.keys(condition).length > 0);
  if (present.length === 0) return {};
  return present.length === 1 ? present[0] : { $and: present };
}

const RANGE_OPERATORS = { gt: '$gt', gte: '$gte', lt: '$lt', lte: '$lte' } as const;

/** A port filter as a MongoDB query. Ranges compare within one type, as the SQLite adapter does. */
function filterQuery(filter: Filter | undefined): Document {
  const query: Document = {};
  for (const [field, condition] of Object.entries(filter ?? {})) {
    if (condition === undefined) continue;
    const path = fieldPath(field);
    if (condition === null || typeof condition !== 'object') {
      // null matches a field that is null or missing, as the port says.
      query[path] = condition;
      continue;
    }
    const operators: Document = {};
    for (const [operator, value] of Object.entries(condition)) {
      if (value === undefined) continue;
      if (operator === 'in') {
        if (!Array.isArray(value)) throw new Error('the in operator takes an array');
        operators.$in = value;
      } else if (operator in RANGE_OPERATORS) {
        if (typeof value !== 'number' && typeof value !== 'string') throw new Error(`${operator} takes a number or a string`);
        operators[RANGE_OPERATORS[operator as keyof typeof RANGE_OPERATORS]] = value;
      } else {
        throw new Error(`unsupported filter operator "${operator}"`);
      }
    }
    if (Object.keys(operators).length > 0) query[path] = operators;
  }
  return query;
}

/**
 * Documents strictly after `after` in the sort order: tied on the first i keys and beyond on key
 * i, for some i. MongoDB puts null and missing first in an ascending key and last in a
 * descending one, and orders types (numbers before strings, ...) before values.
 */
function keysetQuery(sort: SortKey[], after: unknown[]): Document {
  const branches: Document[] = [];
  const tied: Document[] = [];
  sort.forEach(({ field, direction }, i) => {
    const path = fieldPath(field);
    const value = after[i] === undefined ? null : after[i];
    const beyond = direction === 'asc' ? afterAscending(path, value) : afterDescending(path, value);
    if (beyond) branches.push(allOf([...tied, beyond]));
    tied.push({ [path]: value });
  });
  if (branches.length === 0) return { _id: { $in: [] } };
  return branches.length === 1 ? branches[0] : { $or: branches };
}

function afterAscending(path: string, value: unknown): Document {
  if (value === null) return { [path]: { $ne: null } };
  const later = TYPE_ORDER.slice(typeRank(value) + 1).flat();
  return anyOf([{ [path]: { $gt: value } }, ...later.map((type) => ({ [path]: { $type: type } }))]);
}

function afterDescending(path: string, value: unknown): Document | null {
  if (value === null) return null;
  const earlier = TYPE_ORDER.slice(0, typeRank(value)).flat();
  return anyOf([{ [path]: { $lt: value } }, ...earlier.map((type) => ({ [path]: { $type: type } })), { [path]: null }]);
}

function anyOf(conditions: Document[]): Document {
  return conditions.length === 1 ? conditions[0] : { $or: conditions };
}

function typeRank(value: unknown): number {
  if (typeof value === 'number' || typeof value === 'bigint') return 0;
  if (typeof value === 'string') return 1;
  if (typeof value === 'boolean') return 4;
  if (Array.isArray(value)) return 3;
  if (typeof value === 'object') return 2;
  throw new Error(`cannot page after a value of type ${typeof value}`);
}

