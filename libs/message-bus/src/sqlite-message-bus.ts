import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import { closeSqliteDatabase, isTakeableOwner, limitClause, openSqliteDatabase, PreparedStatements, processOwner } from '@lib/shared';
import { BusMessage, ConsumedMessage, ConsumeOptions, Consumer, MessageBus } from './message-bus.port';
import { backoffDelay, Sleeper } from '@lib/shared';

export interface SqliteMessageBusOptions {
  /** Database file (its directory is created if missing), or `':memory:'` for tests. */
  file: string;
  /** Partitions per topic; a message's partition is a hash of its key. */
  partitions?: number;
  /** How often an idle consumer looks for messages published by other processes. */
  pollIntervalMs?: number;
  /** Most messages handed to one `handleBatch` call. */
  batchSize?: number;
  /** First wait before a failed batch is handed over again; doubles up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** How long a consumer keeps its group's lease without renewing it (it renews while alive). */
  leaseMs?: number;
  /** How long a writer waits for another process holding the write lock. */
  busyTimeoutMs?: number;
  /**
   * `NORMAL` (default) keeps every commit across a process crash (WAL); an OS crash or power loss
   * can drop the newest commits. The relay's checkpoint and the reactors' work live in another
   * file, which may keep what this one lost, so the product opens its bus with `FULL`, which syncs
   * each commit to disk.
   */
  synchronous?: 'NORMAL' | 'FULL';
  /** Clock for lease expiry and retention; defaults to `Date.now`. */
  now?: () => number;
  /**
   * Messages older than this are deleted once every group consuming their topic has committed
   * past them (see deleteExpired); unset or -1 keeps every message.
   */
  retentionMs?: number;
  /** How often the expired messages are looked for, when retentionMs is set. */
  retentionCheckMs?: number;
}

interface Settings {
  pollIntervalMs: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  leaseMs: number;
}

/** What a consumer does to its group's log; every call is a short synchronous transaction. */
interface GroupLog {
  /** Takes or renews the group's lease; false while another live consumer holds it. */
  claim(): boolean;
  /** The next messages after the group's committed offsets, in offset order. */
  read(): ConsumedMessage[];
  /** Moves the group's offsets past the batch; false when the lease was lost meanwhile. */
  commit(batch: ConsumedMessage[]): boolean;
  release(): void;
}

interface MessageRow {
  seq: number;
  topic: string;
  partition: number;
  key: string;
  value: string;
  headers: string | null;
}

// `seq` is the rowid and the message's offset; AUTOINCREMENT never reuses one.
/** The bus runs a handful of fixed statements. */
const MAX_CACHED_STATEMENTS = 32;
/** Rows one delete removes: a short transaction, so publishes and commits are not held up. */
const DELETE_CHUNK = 2_000;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS bus_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    partition INTEGER NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    headers TEXT,
    published_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS bus_messages_by_topic ON bus_messages (topic, seq);
  CREATE TABLE IF NOT EXISTS bus_offsets (
    group_id TEXT NOT NULL,
    topic TEXT NOT NULL,
    committed INTEGER NOT NULL,
    PRIMARY KEY (group_id, topic)
  );
  CREATE TABLE IF NOT EXISTS bus_leases (
    group_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
`;

/** Wakes the consumers of every bus in this process that shares a database file. */
const published = new EventEmitter().setMaxListeners(0);

/**
 * The embedded message bus: a durable log in SQLite. A group consumes its topics in offset
 * order (so every key keeps its order) and commits only after a batch is handled. One consumer
 * per group works at a time, holding a lease row; the others stand by and take over when it stops
 * or dies. Several processes may share the file.
 */
export class SqliteMessageBus extends MessageBus {
  private readonly db: Database.Database;
  private readonly now: () => number;
  private readonly partitions: number;
  private readonly batchSize: number;
  private readonly settings: Settings;
  private readonly signal: string;
  private readonly statements: PreparedStatements;
  private readonly consumers = new Set<SqliteConsumer>();
  private readonly append: (topic: string, messages: BusMessage[]) => void;
  private readonly readBatch: (groupId: string, topics: string[]) => ConsumedMessage[];
  private readonly commitBatch: (groupId: string, owner: string, batch: ConsumedMessage[]) => boolean;
  private readonly deleteBatch: (publishedBefore: number, limit: number) => number;
  private readonly logger = new Logger('SqliteMessageBus');
  private readonly retentionMs: number | null;
  private retentionTimer: NodeJS.Timeout | null = null;

  constructor(options: SqliteMessageBusOptions) {
    super();
    this.now = options.now ?? Date.now;
    this.partitions = options.partitions ?? 4;
    if (!Number.isInteger(this.partitions) || this.partitions < 1) throw new RangeError('partitions must be a positive integer');
    this.batchSize = options.batchSize ?? 100;
    this.settings = {
      pollIntervalMs: options.pollIntervalMs ?? 200,
      retryDelayMs: options.retryDelayMs ?? 200,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 10_000,
      leaseMs: options.leaseMs ?? 30_000,
    };
    this.db = openSqliteDatabase(options.file, { busyTimeoutMs: options.busyTimeoutMs ?? 5_000, synchronous: options.synchronous ?? 'NORMAL' });
    this.statements = new PreparedStatements(this.db, MAX_CACHED_STATEMENTS);
    this.db.exec(SCHEMA);
    this.signal = options.file === ':memory:' ? `memory:${randomUUID()}` : resolve(options.file);
    this.append = this.db.transaction((topic: string, messages: BusMessage[]) => this.appendNow(topic, messages)).immediate;
    this.readBatch = this.db.transaction((groupId: string, topics: string[]) => this.readBatchNow(groupId, topics)).deferred;
    this.commitBatch = this.db.transaction((groupId: string, owner: string, batch: ConsumedMessage[]) =>
      this.commitNow(groupId, owner, batch),
    ).immediate;
    this.deleteBatch = this.db.transaction((publishedBefore: number, limit: number) => this.deleteExpiredNow(publishedBefore, limit)).immediate;
    const retentionMs = options.retentionMs ?? -1;
    if (!Number.isInteger(retentionMs) || retentionMs < -1) throw new RangeError('retentionMs must be -1 or a non-negative integer');
    this.retentionMs = retentionMs === -1 ? null : retentionMs;
    if (this.retentionMs !== null) {
      this.retentionTimer = setInterval(() => this.deleteExpiredInChunks(), options.retentionCheckMs ?? 60_000);
      this.retentionTimer.unref();
    }
  }

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    if (typeof topic !== 'string' || topic === '') throw new TypeError('topic must be a non-empty string');
    for (const message of messages) {
      if (typeof message.key !== 'string' || typeof message.value !== 'string') {
        throw new TypeError('a message needs a string key and a string value');
      }
    }
    if (messages.length === 0) return;
    this.append(topic, messages);
    published.emit(this.signal);
  }

  async consume(options: ConsumeOptions): Promise<Consumer> {
    const { groupId } = options;
    if (typeof groupId !== 'string' || groupId === '') throw new TypeError('groupId must be a non-empty string');
    if (options.topics.length === 0) throw new TypeError('consume needs at least one topic');
    const topics = [...new Set(options.topics)];
    const { id: owner, release: forgetOwner } = processOwner();
    // Until half of the lease we last wrote has run out, no one else can hold it: no need to look.
    let renewAfter = 0;
    // The first claim may take over a predecessor's lease that this process cannot see gone (isTakeableOwner).
    let atStart = true;
    const log: GroupLog = {
      claim: () => {
        if (this.now() < renewAfter) return true;
        const expiresAt = this.claimLease(groupId, owner, atStart);
        atStart = false;
        renewAfter = expiresAt === null ? 0 : expiresAt - this.settings.leaseMs / 2;
        return expiresAt !== null;
      },
      read: () => this.readBatch(groupId, topics),
      commit: (batch) => {
        const held = this.commitBatch(groupId, owner, batch);
        if (!held) renewAfter = 0;
        return held;
      },
      release: () => {
        renewAfter = 0;
        this.statements.get('DELETE FROM bus_leases WHERE group_id = ? AND owner = ?').run(groupId, owner);
        forgetOwner();
        published.emit(this.signal);
      },
    };
    const consumer = new SqliteConsumer(options, this.settings, log);
    this.consumers.add(consumer);
    published.on(this.signal, consumer.wake);
    consumer.start(() => {
      published.off(this.signal, consumer.wake);
      this.consumers.delete(consumer);
      forgetOwner();
    });
    return consumer;
  }

  /** A read of the log's file: throws once the database is closed or unreadable. */
  async probe(): Promise<void> {
    this.statements.get('SELECT count(*) FROM sqlite_master').get();
  }

  async close(): Promise<void> {
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    this.retentionTimer = null;
    await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
    closeSqliteDatabase(this.db);
  }

  /**
   * Deletes up to `limit` messages that are past the retention and that every group consuming
   * their topic has committed; returns how many. Unlike Kafka's retention, a message no group has
   * consumed yet (or one a lagging group has not) is kept however old it is, and a topic no group
   * has committed on keeps everything. The space is reused by later messages; the file does not
   * shrink (docs/operations.md).
   */
  deleteExpired(limit = DELETE_CHUNK): number {
    if (this.retentionMs === null || !this.db.open) return 0;
    return this.deleteBatch(this.now() - this.retentionMs, limit);
  }

  private deleteExpiredNow(publishedBefore: number, limit: number): number {
    let deleted = 0;
    const topics = this.statements.get('SELECT topic, MIN(committed) AS upTo FROM bus_offsets GROUP BY topic').all() as Array<{ topic: string; upTo: number }>;
    for (const { topic, upTo } of topics) {
      if (deleted >= limit) break;
      deleted += this.statements.get(
        `DELETE FROM bus_messages WHERE seq IN (
           SELECT seq FROM bus_messages WHERE topic = ? AND seq <= ? AND published_at < ? ORDER BY seq ${limitClause(limit - deleted)})`,
      ).run(topic, upTo, publishedBefore).changes;
    }
    return deleted;
  }

  /** A backlog of expired messages goes a chunk per turn of the event loop. */
  private deleteExpiredInChunks(): void {
    try {
      if (this.deleteExpired() === DELETE_CHUNK) setImmediate(() => this.deleteExpiredInChunks());
    } catch (error) {
      // Busy (another process writing past the busy timeout) or closing: the next round tries again.
      this.logger.warn(`deleting expired bus messages failed; retrying later: ${String(error)}`);
    }
  }

  private appendNow(topic: string, messages: BusMessage[]): void {
    const insert = this.statements.get(
      'INSERT INTO bus_messages (topic, partition, key, value, headers, published_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const publishedAt = this.now();
    for (const { key, value, headers } of messages) {
      insert.run(topic, partitionOf(key, this.partitions), key, value, headers ? JSON.stringify(headers) : null, publishedAt);
    }
  }

  private readBatchNow(groupId: string, topics: string[]): ConsumedMessage[] {
    const committed = this.statements.get('SELECT committed FROM bus_offsets WHERE group_id = ? AND topic = ?').pluck();
    const pending = this.statements.get(
      `SELECT seq, topic, partition, key, value, headers FROM bus_messages WHERE topic = ? AND seq > ? ORDER BY seq ${limitClause(this.batchSize)}`,
    );
    const rows = topics.flatMap(
      (topic) => pending.all(topic, (committed.get(groupId, topic) as number | undefined) ?? 0) as MessageRow[],
    );
    return rows
      .sort((a, b) => a.seq - b.seq)
      .slice(0, this.batchSize)
      .map((row) => ({
        topic: row.topic,
        partition: row.partition,
        offset: String(row.seq),
        key: row.key,
        value: row.value,
        headers: row.headers ? (JSON.parse(row.headers) as Record<string, string>) : {},
      }));
  }

  private commitNow(groupId: string, owner: string, batch: ConsumedMessage[]): boolean {
    const holder = this.statements.get('SELECT owner FROM bus_leases WHERE group_id = ?').pluck().get(groupId);
    if (holder !== owner) return false;
    const upTo = new Map<string, number>();
    for (const message of batch) upTo.set(message.topic, Math.max(upTo.get(message.topic) ?? 0, Number(message.offset)));
    const save = this.statements.get(
      `INSERT INTO bus_offsets (group_id, topic, committed) VALUES (?, ?, ?)
       ON CONFLICT (group_id, topic) DO UPDATE SET committed = max(committed, excluded.committed)`,
    );
    for (const [topic, offset] of upTo) save.run(groupId, topic, offset);
    return true;
  }

  /**
   * Takes or renews the group's lease; its new expiry, or null while another live consumer holds
   * it. A lease whose owner was a process of this host that is gone (killed, crashed: a restart
   * after `kill -9`) is taken at once, and so, by the consumer's first claim, is one of this host
   * that it cannot see (a container restarted in a new PID namespace); until 2026-11-27 the
   * restarted process waited up to the 30 s lease, and live pricing, webhooks and e-mails with it
   * (found by a review).
   */
  private claimLease(groupId: string, owner: string, atStart: boolean): number | null {
    const now = this.now();
    const lease = this.statements.get('SELECT owner, expires_at AS expiresAt FROM bus_leases WHERE group_id = ?').get(groupId) as
      | { owner: string; expiresAt: number }
      | undefined;
    // Renewing is a durable write; do it only once half the lease has run out.
    if (lease?.owner === owner && lease.expiresAt - now > this.settings.leaseMs / 2) return lease.expiresAt;
    const dead = lease && lease.owner !== owner && lease.expiresAt > now && isTakeableOwner(lease.owner, atStart) ? lease.owner : null;
    if (lease && lease.owner !== owner && lease.expiresAt > now && dead === null) return null;
    const expiresAt = now + this.settings.leaseMs;
    const { changes } = this.statements.get(
      `INSERT INTO bus_leases (group_id, owner, expires_at) VALUES (@groupId, @owner, @expiresAt)
       ON CONFLICT (group_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE bus_leases.owner = excluded.owner OR bus_leases.expires_at <= @now OR bus_leases.owner = @dead`,
    ).run({ groupId, owner, expiresAt, now, dead });
    return changes === 1 ? expiresAt : null;
  }
}

/**
 * Hands batches to the handler and commits after each. A failed batch is handed over again,
 * unchanged, after a backoff: nothing is committed past a message that was not handled.
 */
class SqliteConsumer implements Consumer {
  private static readonly logger = new Logger('SqliteMessageBus');
  private stopped = false;
  /** Set by a publish; stops the loop from sleeping past messages it has not read yet. */
  private woken = false;
  private readonly idle = new Sleeper();
  private readonly backoff = new Sleeper();
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: ConsumeOptions,
    private readonly settings: Settings,
    private readonly log: GroupLog,
  ) {}

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
    let held: ConsumedMessage[] | null = null;
    let failures = 0;
    while (!this.stopped) {
      this.woken = false;
      try {
        if (!this.log.claim()) {
          held = null;
          await this.rest();
          continue;
        }
        const batch: ConsumedMessage[] = held ?? this.log.read();
        if (batch.length === 0) {
          await this.rest();
          continue;
        }
        held = batch;
        await this.handle(batch);
        if (!this.log.commit(batch)) {
          this.report(new Error(`consumer group ${this.options.groupId} lost its lease; its new holder re-reads from the last commit`));
        }
        held = null;
        failures = 0;
      } catch (error) {
        this.report(error);
        await this.backoff.sleep(backoffDelay(++failures, this.settings.retryDelayMs, this.settings.maxRetryDelayMs));
      }
    }
    try {
      this.log.release();
    } catch {
      // An unreleased lease expires on its own.
    }
  }

  private async rest(): Promise<void> {
    if (!this.woken && !this.stopped) await this.idle.sleep(this.settings.pollIntervalMs);
  }

  /** Runs the handler, renewing the lease meanwhile so a slow batch is not taken over. */
  private async handle(batch: ConsumedMessage[]): Promise<void> {
    const heartbeat = setInterval(() => {
      try {
        this.log.claim();
      } catch {
        // The next claim in the loop reports a persistent failure.
      }
    }, Math.max(10, this.settings.leaseMs / 4));
    // The handler's own work keeps the process alive, not the heartbeat.
    heartbeat.unref();
    try {
      await this.options.handleBatch(batch);
    } finally {
      clearInterval(heartbeat);
    }
  }

  private report(error: unknown): void {
    try {
      if (this.options.onError) this.options.onError(error);
      else SqliteConsumer.logger.error(`consumer group ${this.options.groupId} failed`, error as Error);
    } catch {
      // A failing error callback must not end the consumer.
    }
  }
}

/** FNV-1a over the key's UTF-8 bytes: the same key always lands in the same partition. */
function partitionOf(key: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(key, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash % partitions;
}
