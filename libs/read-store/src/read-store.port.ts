/**
 * The read-model document store port. Projections keep one document per record in named,
 * versioned collections. Adapters: SQLite (embedded default), MongoDB.
 */

/** Every stored document has a string id and the version guard of the projection that wrote it. */
export interface ReadDocument {
  id: string;
  [field: string]: unknown;
}

export type SortDirection = 'asc' | 'desc';

export interface SortKey {
  field: string;
  direction: SortDirection;
}

/** Equality on a field, or a range. Fields may be dotted paths into the document. */
export type FieldCondition =
  | string
  | number
  | boolean
  | null
  | { gt?: number | string; gte?: number | string; lt?: number | string; lte?: number | string; in?: Array<string | number> };

export type Filter = Record<string, FieldCondition>;

export interface FindOptions {
  filter?: Filter;
  /** The last key must make the order total (e.g. `id`). */
  sort: SortKey[];
  limit: number;
  /** Values of the sort keys of the last document of the previous page. */
  after?: unknown[];
}

export interface FindResult<T> {
  items: T[];
  /** sort-key values of the last item when more items follow, else null */
  nextAfter: unknown[] | null;
}

export interface IndexSpec {
  fields: Array<{ field: string; direction: SortDirection }>;
  unique?: boolean;
  /**
   * Fields the index stores besides its keys (not with `unique`), so a `findJson` of one of them
   * that this index serves is answered from the index alone, without reading the documents.
   */
  include?: string[];
}

/**
 * A write made by a projection. `guard` makes replays idempotent: the write applies only when
 * the stored document's `guard.field` is absent or lower than `guard.value`.
 */
export interface GuardedUpsert<T extends ReadDocument = ReadDocument> {
  collection: string;
  document: T;
  guard?: { field: string; value: number };
}

export interface Checkpoint {
  name: string;
  position: number;
}

/**
 * Writes of a bulk load: a projection rebuild into a generation of collections that nothing else
 * writes yet. Each `write` upserts documents and saves the checkpoints of the projections they
 * belong to. The caller waits for one write before it makes the next, and prepares the next
 * while the engine stores the one before.
 */
export interface BulkWriter {
  /**
   * Whether a write and its checkpoints commit together. Then a stored document is never ahead of
   * its projection's checkpoint, which a rebuild that resumes can rely on.
   */
  readonly atomic: boolean;
  /** Applies the upserts (as `ReadStore.upsert` does) and then saves the checkpoints; returns how many upserts applied. */
  write(writes: GuardedUpsert[], checkpoints: Checkpoint[]): Promise<number>;
  /** Waits for the write in progress, then releases what the writer holds. */
  close(): Promise<void>;
}

export abstract class ReadStore {
  abstract ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<void>;
  abstract get<T extends ReadDocument>(collection: string, id: string): Promise<T | null>;
  abstract find<T extends ReadDocument>(collection: string, options: FindOptions): Promise<FindResult<T>>;
  /**
   * Like `find`, but each item is the JSON text of the document's `field` (`null` when it is
   * missing) instead of the document. A projection that keeps an API representation in a field
   * lets a list endpoint answer with these texts as they are, without decoding every document
   * and encoding the response again.
   */
  abstract findJson(collection: string, field: string, options: FindOptions): Promise<FindResult<string>>;
  abstract count(collection: string, filter?: Filter): Promise<number>;
  /**
   * Applies the upserts in order; returns how many were applied (guard passed). With a
   * checkpoint, it is saved with the writes: atomically where the engine allows, else after them
   * (the guards make re-applying the writes harmless).
   */
  abstract upsert(writes: GuardedUpsert[], checkpoint?: Checkpoint): Promise<number>;
  abstract delete(collection: string, id: string): Promise<void>;
  abstract dropCollection(collection: string): Promise<void>;
  abstract listCollections(): Promise<string[]>;
  /** Checkpoints live beside the data so a projection and its position move together. */
  abstract getCheckpoint(name: string): Promise<number | null>;
  abstract saveCheckpoint(name: string, position: number): Promise<void>;
  /** Saves several checkpoints in one write. */
  abstract saveCheckpoints(checkpoints: Checkpoint[]): Promise<void>;
  /** Forgets the checkpoints (of collections dropped); names without one are skipped. */
  abstract deleteCheckpoints(names: string[]): Promise<void>;
  abstract close(): Promise<void>;

  /** A writer for a bulk load; by default the store's own upserts, checkpoints after the writes. */
  openBulkWriter(): BulkWriter {
    return {
      atomic: false,
      write: async (writes, checkpoints) => {
        const applied = await this.upsert(writes);
        if (checkpoints.length > 0) await this.saveCheckpoints(checkpoints);
        return applied;
      },
      close: async () => undefined,
    };
  }

  /**
   * A value that differs after every write to the collection, by this process or any other, so
   * that whatever was read while it stayed the same may be answered again without reading. Null
   * when the engine cannot tell without a round trip: then nothing read from it may be kept.
   */
  changeToken(_collection: string): string | null {
    return null;
  }
}
