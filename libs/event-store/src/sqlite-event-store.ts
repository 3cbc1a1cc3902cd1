import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import { closeSqliteDatabase, limitClause, openSqliteDatabase, PreparedStatements } from '@lib/shared';
import {
  AppendResult,
  EventData,
  EventFilter,
  EventStore,
  ExpectedRevision,
  ReadAllOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevisionError,
} from './event-store.port';
import { backoffDelay, Sleeper } from '@lib/shared';
import { handOver } from './hand-over';

export interface SqliteEventStoreOptions {
  /** Database file (its directory is created if missing), or `':memory:'` for tests. */
  file: string;
  /** Source of `recordedAt`; defaults to `Date.now`. */
  now?: () => number;
  /** Source of event ids; defaults to random UUIDs. */
  newId?: () => string;
  /** How often live subscriptions look for appends made by other processes. */
  pollIntervalMs?: number;
  /** Events read per query while a subscription catches up. */
  batchSize?: number;
  /** First wait before a failed handler is retried; doubles up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** How long a writer waits for another process holding the write lock. */
  busyTimeoutMs?: number;
}

/** A page of the global log for a subscription: its events, and the position scanned up to. */
interface Page {
  events: RecordedEvent[];
  scannedTo: number;
  full: boolean;
}

/** An append waiting for the next group commit. */
interface QueuedAppend {
  streamId: string;
  events: EventData[];
  expected: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

type AppendOutcome = { ok: true; result: AppendResult } | { ok: false; error: unknown };

interface DeliverySettings {
  pollIntervalMs: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
}

interface EventRow {
  position: number;
  id: string;
  stream_id: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  recorded_at: number;
}

const MAX_CACHED_STATEMENTS = 64;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    stream_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    metadata TEXT NOT NULL,
    recorded_at INTEGER NOT NULL,
    UNIQUE (stream_id, revision)
  );
`;

/** Wakes the subscriptions of every store in this process that shares a database file. */
const appended = new EventEmitter().setMaxListeners(0);

/**
 * The embedded event store: one SQLite file in WAL mode, fsync on every commit. Several
 * processes may share the file; each commit takes the write lock, so the global order is the
 * commit order and a subscriber never sees a position appear behind one it has passed.
 *
 * Appends are group-committed: every append made during one turn of the event loop is written in
 * one transaction and acknowledged after its fsync, so concurrent writers share the cost of one
 * sync instead of queueing for one each. Each append runs in its own savepoint, so one refused
 * append (a wrong expected revision) does not affect the others.
 */
export class SqliteEventStore extends EventStore {
  private readonly db: Database.Database;
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly signal: string;
  private readonly statements: PreparedStatements;
  private readonly subscriptions = new Set<SqliteSubscription>();
  private readonly appendAll: (appends: QueuedAppend[]) => AppendOutcome[];
  private queued: QueuedAppend[] = [];
  private readonly readPage: (after: number, filter: EventFilter | undefined) => Page;
  private readonly delivery: DeliverySettings;
  private readonly batchSize: number;

  constructor(options: SqliteEventStoreOptions) {
    super();
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? randomUUID;
    this.batchSize = options.batchSize ?? 500;
    this.delivery = {
      pollIntervalMs: options.pollIntervalMs ?? 200,
      retryDelayMs: options.retryDelayMs ?? 100,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 5_000,
    };
    // FULL syncs the WAL on every commit: an acknowledged append survives a crash or power loss.
    this.db = openSqliteDatabase(options.file, { busyTimeoutMs: options.busyTimeoutMs ?? 5_000, synchronous: 'FULL' });
    this.statements = new PreparedStatements(this.db, MAX_CACHED_STATEMENTS);
    this.db.exec(SCHEMA);
    this.signal = options.file === ':memory:' ? `memory:${randomUUID()}` : resolve(options.file);
    // Called inside appendAll's transaction, a better-sqlite3 transaction function opens a savepoint.
    const appendOne = this.db.transaction((append: QueuedAppend) => this.appendInTransaction(append.streamId, append.events, append.expected));
    this.appendAll = this.db.transaction((appends: QueuedAppend[]) =>
      appends.map((append): AppendOutcome => {
        try {
          return { ok: true, result: appendOne(append) };
        } catch (error) {
          return { ok: false, error: this.appendError(append, error) };
        }
      }),
    ).immediate;
    this.readPage = this.db.transaction((after: number, filter: EventFilter | undefined) =>
      this.readPageInSnapshot(after, filter),
    ).deferred;
  }

  async appendToStream(streamId: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult> {
    if (typeof streamId !== 'string' || streamId === '') throw new TypeError('streamId must be a non-empty string');
    return new Promise<AppendResult>((resolve, reject) => {
      if (this.queued.push({ streamId, events, expected, resolve, reject }) === 1) setImmediate(() => this.commitQueued());
    });
  }

  async readStream(streamId: string, options: { fromRevision?: number; maxCount?: number } = {}): Promise<RecordedEvent[]> {
    // A stream's revisions run 0, 1, 2, … without gaps, so maxCount bounds the revision itself.
    const from = options.fromRevision ?? 0;
    const rows = this.statements.get(
      'SELECT * FROM events WHERE stream_id = ? AND revision >= ? AND revision < ? ORDER BY revision',
    ).all(streamId, from, options.maxCount === undefined ? Number.MAX_SAFE_INTEGER : from + options.maxCount) as EventRow[];
    return rows.map(toRecordedEvent);
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.readAllNow(options);
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    const subscription = new SqliteSubscription(options, this.delivery, (after) => this.readPage(after, options.filter));
    this.subscriptions.add(subscription);
    appended.on(this.signal, subscription.wake);
    subscription.start(() => {
      appended.off(this.signal, subscription.wake);
      this.subscriptions.delete(subscription);
    });
    return subscription;
  }

  async headPosition(): Promise<number> {
    return this.headPositionNow();
  }

  async close(): Promise<void> {
    if (this.db.open) this.commitQueued();
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    closeSqliteDatabase(this.db);
  }

  /** Writes every queued append in one transaction and settles each once the commit is durable. */
  private commitQueued(): void {
    const appends = this.queued;
    if (appends.length === 0) return;
    this.queued = [];
    let outcomes: AppendOutcome[];
    try {
      outcomes = this.appendAll(appends);
    } catch (error) {
      // The commit itself failed (disk, lock timeout): nothing was written.
      for (const append of appends) append.reject(error);
      return;
    }
    if (outcomes.some((outcome, i) => outcome.ok && appends[i].events.length > 0)) appended.emit(this.signal);
    outcomes.forEach((outcome, i) => (outcome.ok ? appends[i].resolve(outcome.result) : appends[i].reject(outcome.error)));
  }

  private appendError(append: QueuedAppend, error: unknown): unknown {
    // The check runs under the write lock, so this is only a second line of defence.
    if (!isRevisionConflict(error)) return error;
    return new WrongExpectedRevisionError(append.streamId, append.expected, this.lastEvent(append.streamId)?.revision ?? 'no_stream');
  }

  /** Runs inside one read transaction, so the page and the head come from the same snapshot. */
  private readPageInSnapshot(after: number, filter: EventFilter | undefined): Page {
    const events = this.readAllNow({ after, maxCount: this.batchSize, filter });
    const full = events.length === this.batchSize;
    // A short page saw every event up to the head, matching or not, so the next scan starts there.
    const scannedTo = full ? events[events.length - 1].position : Math.max(after, this.headPositionNow());
    return { events, scannedTo, full };
  }

  private readAllNow(options: ReadAllOptions): RecordedEvent[] {
    const params: Record<string, unknown> = { after: options.after };
    const where = ['position > @after'];
    const byPrefix = (column: string, prefixes: string[] | undefined, name: string): void => {
      if (!prefixes?.length) return;
      const terms = prefixes.map((prefix, i) => {
        params[`${name}${i}`] = prefix;
        return `substr(${column}, 1, length(@${name}${i})) = @${name}${i}`;
      });
      where.push(`(${terms.join(' OR ')})`);
    };
    byPrefix('stream_id', options.filter?.streamPrefixes, 's');
    byPrefix('type', options.filter?.eventTypePrefixes, 't');
    const rows = this.statements.get(
      `SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY position ${limitClause(options.maxCount)}`,
    ).all(params) as EventRow[];
    return rows.map(toRecordedEvent);
  }

  private headPositionNow(): number {
    return (this.statements.get('SELECT COALESCE(MAX(position), 0) FROM events').pluck().get() as number) ?? 0;
  }

  private appendInTransaction(streamId: string, events: EventData[], expected: ExpectedRevision): AppendResult {
    const last = this.lastEvent(streamId);
    const actual = last ? last.revision : 'no_stream';
    if (!revisionMatches(expected, actual)) throw new WrongExpectedRevisionError(streamId, expected, actual);
    if (events.length === 0) return { nextRevision: last?.revision ?? -1, position: last?.position ?? 0 };
    const insert = this.statements.get(
      'INSERT INTO events (id, stream_id, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const recordedAt = this.now();
    let revision = last ? last.revision : -1;
    let position = 0;
    for (const event of events) {
      if (typeof event.type !== 'string' || event.type === '') throw new TypeError('event type must be a non-empty string');
      revision += 1;
      const { lastInsertRowid } = insert.run(
        this.newId(),
        streamId,
        revision,
        event.type,
        JSON.stringify(event.data ?? null),
        JSON.stringify(event.metadata ?? {}),
        recordedAt,
      );
      position = Number(lastInsertRowid);
    }
    return { nextRevision: revision, position };
  }

  private lastEvent(streamId: string): { revision: number; position: number } | undefined {
    return this.statements.get(
      'SELECT revision, position FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1',
    ).get(streamId) as { revision: number; position: number } | undefined;
  }
}

/**
 * Delivers events in global order, one at a time or a page at a time. A failing handler gets the
 * same event (or batch) again after a backoff; nothing is skipped, so a projection behind a bug
 * stalls visibly instead of silently losing data.
 */
class SqliteSubscription implements Subscription {
  private static readonly logger = new Logger('SqliteEventStore');
  private current: number;
  private stopped = false;
  /** Set by an append; stops the loop from sleeping past events it has not read yet. */
  private woken = false;
  private readonly idle = new Sleeper();
  private readonly backoff = new Sleeper();
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: SubscribeOptions,
    private readonly settings: DeliverySettings,
    private readonly readPage: (after: number) => Page,
  ) {
    this.current = options.after;
  }

  get position(): number {
    return this.current;
  }

  readonly wake = (): void => {
    this.woken = true;
    this.idle.interrupt();
  };

  start(onFinished: () => void): void {
    this.done = this.run().finally(onFinished);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.idle.interrupt();
    this.backoff.interrupt();
    await this.done;
  }

  private async run(): Promise<void> {
    let scanned = this.current;
    let failures = 0;
    while (!this.stopped) {
      this.woken = false;
      let page: Page;
      try {
        page = this.readPage(scanned);
        failures = 0;
      } catch (error) {
        this.report(error);
        await this.backoff.sleep(backoffDelay(++failures, this.settings.retryDelayMs, this.settings.maxRetryDelayMs));
        continue;
      }
      if (this.options.handleBatch) {
        if (page.events.length > 0 && !(await this.deliver(page.events))) return;
      } else {
        for (const event of page.events) {
          if (!(await this.deliver([event]))) return;
        }
      }
      scanned = page.scannedTo;
      if (!page.full && !this.woken && !this.stopped) await this.idle.sleep(this.settings.pollIntervalMs);
    }
  }

  /** Hands the events to the handler until it succeeds; false when stopped first. */
  private async deliver(events: RecordedEvent[]): Promise<boolean> {
    if (!(await handOver(events, this.options, this.settings, this.backoff, () => this.stopped, (error) => this.report(error)))) return false;
    this.current = events[events.length - 1].position;
    return true;
  }

  private report(error: unknown): void {
    try {
      if (this.options.onError) this.options.onError(error);
      else SqliteSubscription.logger.error(`subscription handler failed at position ${this.current}`, error as Error);
    } catch {
      // A failing error callback must not end the subscription.
    }
  }
}

function revisionMatches(expected: ExpectedRevision, actual: number | 'no_stream'): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return actual === 'no_stream';
    case 'stream_exists':
      return actual !== 'no_stream';
    default:
      return actual === expected;
  }
}

/** Duck-typed: the native module may raise errors from another realm (as under Jest). */
function isRevisionConflict(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 'SQLITE_CONSTRAINT_UNIQUE' && String(message).includes('events.stream_id');
}

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.id,
    streamId: row.stream_id,
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
    revision: row.revision,
    position: row.position,
    recordedAt: row.recorded_at,
  };
}
