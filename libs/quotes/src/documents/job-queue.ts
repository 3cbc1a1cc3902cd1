import { Logger } from '@nestjs/common';
import { ReadStore, type IndexSpec, type ReadDocument } from '@lib/read-store';
import { isTakeableOwner, processOwner, type Clock } from '@lib/shared';

/** `working`: an attempt is under way (a PDF `generating`, a mail `sending`); `done` and `failed` are final. */
export type JobStatus = 'pending' | 'working' | 'done' | 'failed';

/** A side effect the outbox carries out with retries: one record, with its attempts and last error in view. */
export interface JobRecord extends ReadDocument {
  id: string;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  lastError: string | null;
  /** when the next attempt is due (pending) */
  scheduledFor: number;
  /** while working: when the attempt is presumed dead (its process crashed) and is made again */
  leaseUntil: number | null;
  /**
   * while working: the process making the attempt (processOwner). When that process is gone and
   * was on this host (a restart after `kill -9`), the attempt is made again at once, not when the
   * lease is over (2 min). Absent in records stored before 2026-11-27.
   */
  leaseOwner?: string | null;
  createdAt: number;
  updatedAt: number;
  /** revision of the record: every write is a compare-and-set on it */
  _rev: number;
}

const QUEUE_INDEX: IndexSpec = {
  fields: [{ field: 'status', direction: 'asc' }, { field: 'scheduledFor', direction: 'asc' }, { field: 'id', direction: 'asc' }],
};
const QUEUE_ORDER = [
  { field: 'scheduledFor', direction: 'asc' as const },
  { field: 'id', direction: 'asc' as const },
];

/**
 * Job records in a collection the outbox owns (never a projection: no rebuild creates, resets or
 * repeats one). Every write is a compare-and-set on `_rev`, so concurrent writers (the worker,
 * a reactor re-arming a job, a second process) never overwrite each other.
 */
export class JobStore<R extends JobRecord> {
  constructor(
    protected readonly reads: ReadStore,
    readonly collection: string,
    private readonly indexes: IndexSpec[] = [],
  ) {}

  ensureIndexes(): Promise<void> {
    return this.reads.ensureIndexes(this.collection, [QUEUE_INDEX, ...this.indexes]);
  }

  get(id: string): Promise<R | null> {
    return this.reads.get<R>(this.collection, id);
  }

  /** Inserts the record unless one with its id exists; true when this call created it. */
  async create(record: R): Promise<boolean> {
    return (await this.reads.upsert([{ collection: this.collection, document: { ...record, _rev: 1 }, guard: { field: '_rev', value: 1 } }])) === 1;
  }

  /** Replaces `current` with `next` unless the record was written since `current` was read; null when it lost. */
  async compareAndSet(current: R, next: R): Promise<R | null> {
    const stored = { ...next, _rev: current._rev + 1 };
    const applied = await this.reads.upsert([{ collection: this.collection, document: stored, guard: { field: '_rev', value: stored._rev } }]);
    return applied === 1 ? stored : null;
  }

  async findDue(now: number, limit: number): Promise<R[]> {
    return (await this.reads.find<R>(this.collection, { filter: { status: 'pending', scheduledFor: { lte: now } }, sort: QUEUE_ORDER, limit })).items;
  }

  async nextDueAt(): Promise<number | null> {
    const { items } = await this.reads.find<R>(this.collection, { filter: { status: 'pending' }, sort: QUEUE_ORDER, limit: 1 });
    return items[0]?.scheduledFor ?? null;
  }

  /**
   * Working records whose attempt is over for good: its lease ran out, or its process on this host
   * is gone; `atStart`, also those of a process of this host that cannot be seen (isTakeableOwner).
   */
  async findAbandoned(now: number, limit: number, atStart = false): Promise<R[]> {
    const { items } = await this.reads.find<R>(this.collection, { filter: { status: 'working' }, sort: QUEUE_ORDER, limit });
    return items.filter((record) => (record.leaseUntil !== null && record.leaseUntil < now) || (typeof record.leaseOwner === 'string' && isTakeableOwner(record.leaseOwner, atStart)));
  }
}

/** Delay before attempt number `attempt` (0-based); past the schedule's end, its last entry. */
export function delayBefore(schedule: readonly number[], attempt: number): number {
  return schedule.length === 0 ? 0 : schedule[Math.min(attempt, schedule.length - 1)];
}

/** A new pending record's bookkeeping: due after the schedule's first delay. */
export function newJob(id: string, now: number, schedule: readonly number[]): JobRecord {
  return {
    id,
    status: 'pending',
    attempts: 0,
    maxAttempts: Math.max(1, schedule.length),
    lastError: null,
    scheduledFor: now + delayBefore(schedule, 0),
    leaseUntil: null,
    leaseOwner: null,
    createdAt: now,
    updatedAt: now,
    _rev: 1,
  };
}

/**
 * What an attempt came to: `done` (with the fields it sets), `retry` (a failed attempt: counted,
 * retried on the schedule, `failed` once the schedule is used up), or `wait` (not an attempt:
 * something it needs is not ready yet; look again at `until`).
 */
export type JobOutcome<R extends JobRecord> =
  | { kind: 'done'; changes: Partial<R> }
  | { kind: 'retry'; error: string }
  | { kind: 'wait'; until: number; note: string };

/** The record after an attempt with that outcome. */
export function afterAttempt<R extends JobRecord>(record: R, outcome: JobOutcome<R>, now: number, schedule: readonly number[]): R {
  const base = { ...record, leaseUntil: null, leaseOwner: null, updatedAt: now };
  switch (outcome.kind) {
    case 'done':
      return { ...base, ...outcome.changes, status: 'done', attempts: record.attempts + 1, lastError: null };
    case 'wait':
      return { ...base, status: 'pending', scheduledFor: outcome.until, lastError: outcome.note };
    case 'retry': {
      const attempts = record.attempts + 1;
      const exhausted = attempts >= record.maxAttempts;
      return { ...base, status: exhausted ? 'failed' : 'pending', attempts, lastError: outcome.error, scheduledFor: exhausted ? record.scheduledFor : now + delayBefore(schedule, attempts) };
    }
  }
}

export interface JobRunnerOptions<R extends JobRecord> {
  /** names the jobs in log lines ("quote PDF", "quote e-mail") */
  name: string;
  store: JobStore<R>;
  attempt: (record: R) => Promise<JobOutcome<R>>;
  schedule: readonly number[];
  clock: Clock;
  /** how often the queue is looked at besides the in-process wake-ups (records of other processes) */
  pollIntervalMs?: number;
  /** how long an attempt may take before another look presumes it dead */
  leaseMs?: number;
  concurrency?: number;
}

/**
 * Runs due jobs of one store: claims (`pending` → `working`, compare-and-set), attempts, records
 * the outcome; retries on the schedule. Looks at the queue when woken (a reactor created or
 * re-armed a job in this process), when the earliest pending job is due, and every poll interval.
 * Runs in the outbox process only.
 */
export class JobRunner<R extends JobRecord> {
  private readonly logger: Logger;
  private running = false;
  private timer: NodeJS.Timeout | null = null;
  private loop: Promise<void> | null = null;
  private again = false;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly owner = processOwner();
  /** the first look after start may take over a predecessor's attempts (findAbandoned `atStart`) */
  private lookedOnce = false;

  constructor(private readonly options: JobRunnerOptions<R>) {
    this.logger = new Logger(`Jobs:${options.name}`);
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.leaseMs = options.leaseMs ?? 120_000;
    this.concurrency = options.concurrency ?? 4;
  }

  start(): void {
    this.running = true;
    this.wake();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.loop;
    this.owner.release();
  }

  wake(): void {
    if (!this.running) return;
    if (this.loop) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.loop = this.lookAtQueue().finally(() => {
      this.loop = null;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async lookAtQueue(): Promise<void> {
    const { store, clock } = this.options;
    let nextLook = clock.now() + this.pollIntervalMs;
    try {
      // this process's own attempts are awaited below, within the look: none is running here now
      const atStart = !this.lookedOnce;
      this.lookedOnce = true;
      for (const record of await store.findAbandoned(clock.now(), 50, atStart)) {
        if (await store.compareAndSet(record, { ...record, status: 'pending', leaseUntil: null, leaseOwner: null, scheduledFor: clock.now(), updatedAt: clock.now() })) {
          this.logger.warn(`${record.id}: an interrupted attempt will be made again`);
        }
      }
      while (this.running) {
        const due = await store.findDue(clock.now(), this.concurrency);
        if (due.length === 0) break;
        await Promise.all(due.map((record) => this.run(record)));
      }
      const next = await store.nextDueAt();
      if (next !== null) nextLook = Math.min(nextLook, next);
    } catch (error) {
      this.logger.error(`looking at the queue failed; retrying: ${String(error)}`);
    }
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.wake();
    }, Math.max(5, nextLook - clock.now()));
    this.timer.unref();
  }

  private async run(record: R): Promise<void> {
    const { store, clock, schedule, name } = this.options;
    const claimed = await store.compareAndSet(record, { ...record, status: 'working', leaseUntil: clock.now() + this.leaseMs, leaseOwner: this.owner.id, updatedAt: clock.now() });
    if (!claimed) return;
    let outcome: JobOutcome<R>;
    try {
      outcome = await this.options.attempt(claimed);
    } catch (error) {
      outcome = { kind: 'retry', error: error instanceof Error ? error.message : String(error) };
    }
    const next = afterAttempt(claimed, outcome, clock.now(), schedule);
    const stored = await store.compareAndSet(claimed, next).catch((error: unknown) => {
      this.logger.error(`${name} ${record.id}: recording the outcome failed (the lease makes the attempt again): ${String(error)}`);
      return null;
    });
    if (!stored) return;
    if (stored.status === 'failed') this.logger.error(`${name} ${record.id} failed after ${stored.attempts} attempt(s): ${stored.lastError}`);
    else if (outcome.kind === 'retry') this.logger.warn(`${name} ${record.id} attempt ${stored.attempts} of ${stored.maxAttempts} failed, retrying: ${stored.lastError}`);
  }
}
