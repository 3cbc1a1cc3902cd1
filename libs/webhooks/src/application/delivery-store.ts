import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ReadStore, type Filter, type FindResult, type GuardedUpsert, type IndexSpec } from '@lib/read-store';
import type { DeliveryRecord, DeliveryStatus } from '../domain/delivery';

/**
 * The delivery log: a collection the outbox owns (not a projection, so no rebuild ever creates,
 * resets or re-sends a delivery). Versioned by name like every stored shape.
 */
export const DELIVERIES = 'webhook_deliveries_v1';

const INDEXES: IndexSpec[] = [
  // processing records to recover (and, before the dispatcher's two lanes, its queue)
  { fields: [{ field: 'status', direction: 'asc' }, { field: 'scheduledFor', direction: 'asc' }, { field: 'id', direction: 'asc' }] },
  // each lane of the dispatcher's queue: its due pending records, oldest first, without reading the other lane's backlog
  { fields: [{ field: 'status', direction: 'asc' }, { field: 'fastPath', direction: 'asc' }, { field: 'scheduledFor', direction: 'asc' }, { field: 'id', direction: 'asc' }] },
  // a lane's queue one organization at a time, and the next organization with pending records, for the per-organization cap
  {
    fields: [
      { field: 'status', direction: 'asc' },
      { field: 'fastPath', direction: 'asc' },
      { field: 'organizationId', direction: 'asc' },
      { field: 'scheduledFor', direction: 'asc' },
      { field: 'id', direction: 'asc' },
    ],
  },
  // GET /events, newest first, with each filter
  { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }] },
  { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'type', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }] },
  { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'status', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }] },
];

const REVISION = '_rev';
/** marks which writer's compare-and-set won when a batch did not apply completely */
const WRITE_TOKEN = '_w';
const MAX_BATCH = 500;

interface QueuedWrite {
  write: GuardedUpsert;
  id: string;
  token: string;
  resolve: (applied: boolean) => void;
  reject: (error: unknown) => void;
}

const QUEUE_ORDER = [
  { field: 'scheduledFor', direction: 'asc' as const },
  { field: 'id', direction: 'asc' as const },
];
const ORGANIZATION_ORDER = [{ field: 'organizationId', direction: 'asc' as const }, ...QUEUE_ORDER];

/**
 * Delivery records in the ReadStore. Every write is a compare-and-set on `_rev` (the port's
 * guarded upsert: applied only while the stored `_rev` is below the new one), so concurrent
 * writers (dispatcher, redelivery, recovery, several processes) never overwrite each other.
 * Writes issued in the same turn of the event loop are committed together (group commit): one
 * transaction, one fsync, for many deliveries.
 */
@Injectable()
export class DeliveryStore {
  private queue: QueuedWrite[] = [];
  private flushScheduled = false;
  private readonly tokenPrefix = randomBytes(6).toString('hex');
  private tokenCounter = 0;

  constructor(private readonly reads: ReadStore) {}

  ensureIndexes(): Promise<void> {
    return this.reads.ensureIndexes(DELIVERIES, INDEXES);
  }

  get(id: string): Promise<DeliveryRecord | null> {
    return this.reads.get<DeliveryRecord>(DELIVERIES, id);
  }

  /** Inserts the records that do not exist yet; returns those this call created. */
  async createMissing(records: DeliveryRecord[]): Promise<DeliveryRecord[]> {
    const results = await Promise.all(records.map((record) => this.write({ ...record, [REVISION]: 1 }, 1)));
    return records.filter((_, i) => results[i]).map((record) => ({ ...record, [REVISION]: 1 }));
  }

  /**
   * Replaces `current` with `next` unless someone else wrote the record since `current` was
   * read. Returns the stored record, or null when it lost.
   */
  async compareAndSet(current: DeliveryRecord, next: DeliveryRecord): Promise<DeliveryRecord | null> {
    const revision = current[REVISION] + 1;
    const stored = { ...next, [REVISION]: revision };
    return (await this.write(stored, revision)) ? stored : null;
  }

  /**
   * Pending records of one lane (fast path or ordinary) whose time has come, oldest due first;
   * with `organizationId`, those of that organization only.
   */
  async findDue(now: number, limit: number, fastPath: boolean, organizationId?: string): Promise<DeliveryRecord[]> {
    const filter: Filter = { status: 'pending', fastPath, scheduledFor: { lte: now } };
    if (organizationId !== undefined) filter.organizationId = organizationId;
    const { items } = await this.reads.find<DeliveryRecord>(DELIVERIES, { filter, sort: QUEUE_ORDER, limit });
    return items;
  }

  /** When the earliest pending record of one lane is due, or null when none is pending. */
  async nextDueAt(fastPath: boolean): Promise<number | null> {
    const { items } = await this.reads.find<DeliveryRecord>(DELIVERIES, { filter: { status: 'pending', fastPath }, sort: QUEUE_ORDER, limit: 1 });
    return items[0]?.scheduledFor ?? null;
  }

  /**
   * The first organization, in id order, after `after` (from the first when null) and up to
   * `upTo` (inclusive), with pending records in one lane; null when there is none. One index seek.
   */
  async nextOrganization(fastPath: boolean, after: string | null, upTo?: string): Promise<string | null> {
    const range: { gt?: string; lte?: string } = {};
    if (after !== null) range.gt = after;
    if (upTo !== undefined) range.lte = upTo;
    const filter: Filter = { status: 'pending', fastPath };
    if (range.gt !== undefined || range.lte !== undefined) filter.organizationId = range;
    // Only the id's JSON: the record itself, however large, is neither sent nor decoded.
    const { items } = await this.reads.findJson(DELIVERIES, 'organizationId', { filter, sort: ORGANIZATION_ORDER, limit: 1 });
    return items.length > 0 ? (JSON.parse(items[0]) as string) : null;
  }

  findByStatus(status: DeliveryStatus, limit: number, after?: unknown[]): Promise<FindResult<DeliveryRecord>> {
    return this.reads.find<DeliveryRecord>(DELIVERIES, { filter: { status }, sort: QUEUE_ORDER, limit, after });
  }

  /** The records of one event type, in id order. */
  findByType(type: string, limit: number, after?: unknown[]): Promise<FindResult<DeliveryRecord>> {
    return this.reads.find<DeliveryRecord>(DELIVERIES, { filter: { type }, sort: [{ field: 'id', direction: 'asc' }], limit, after });
  }

  list(filter: Filter, limit: number, after?: unknown[]): Promise<FindResult<DeliveryRecord>> {
    return this.reads.find<DeliveryRecord>(DELIVERIES, {
      filter,
      sort: [
        { field: 'createdAt', direction: 'desc' },
        { field: 'id', direction: 'desc' },
      ],
      limit,
      after,
    });
  }

  private write(document: DeliveryRecord, revision: number): Promise<boolean> {
    const token = `${this.tokenPrefix}.${(this.tokenCounter++).toString(36)}`;
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({
        write: { collection: DELIVERIES, document: { ...document, [WRITE_TOKEN]: token }, guard: { field: REVISION, value: revision } },
        id: document.id,
        token,
        resolve,
        reject,
      });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, MAX_BATCH);
    if (this.queue.length) this.scheduleFlush();
    if (batch.length === 0) return;
    try {
      const applied = await this.reads.upsert(batch.map((entry) => entry.write));
      if (applied === batch.length) {
        for (const entry of batch) entry.resolve(true);
        return;
      }
      // Some guard refused: the stored token tells which writes won.
      for (const entry of batch) {
        const stored = await this.reads.get<DeliveryRecord>(DELIVERIES, entry.id);
        entry.resolve(stored?.[WRITE_TOKEN] === entry.token);
      }
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    }
  }
}
