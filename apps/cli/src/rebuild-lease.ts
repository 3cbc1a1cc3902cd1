import type { ReadDocument, ReadStore } from '@lib/read-store';
import { isGoneLocalProcess, processOwner } from '@lib/shared';

/** The read store's collection of the rebuild lease: one document, held by the running rebuild. */
export const REBUILD_LEASE = 'projection_rebuild_lease';
const LEASE_ID = 'rebuild';
/** How often the running rebuild renews its lease. */
export const LEASE_RENEW_MS = 2_000;
/** How long a lease nobody renews holds: a rebuild on another host that died without a word (kill -9, a crash) blocks the next one this long. */
export const LEASE_TTL_MS = 20_000;

export interface RebuildLeaseDocument extends ReadDocument {
  id: string;
  /** one more with every write: a write guarded by it applies only over the lease it was made from */
  term: number;
  /** this run's, so a later process that happens to get the same pid is not taken for it */
  token: string;
  host: string;
  /** the PID namespace of its process (processOwner); absent in leases taken before 2026-11-27 */
  pidNamespace?: string | null;
  pid: number;
  projections: string[];
  startedAt: number;
  /** Unix ms; 0 once released */
  expiresAt: number;
}

/** The rebuild that holds the lease now, as projections:status and a refused rebuild name it. */
export type RunningRebuild = Pick<RebuildLeaseDocument, 'host' | 'pid' | 'projections' | 'startedAt' | 'expiresAt'>;

/**
 * The rebuild the lease names, unless it is over: released, not renewed in time, or — on this
 * host — its process is gone, so a rebuild killed with kill -9 is continued at once.
 */
export function runningRebuild(lease: RebuildLeaseDocument | null, now = Date.now()): RunningRebuild | null {
  if (!lease || lease.expiresAt <= now) return null;
  if (isGoneLocalProcess(lease)) return null;
  const { host, pid, projections, startedAt, expiresAt } = lease;
  return { host, pid, projections, startedAt, expiresAt };
}

export const readRebuildLease = (store: ReadStore) => store.get<RebuildLeaseDocument>(REBUILD_LEASE, LEASE_ID);

export function describeRebuild(running: RunningRebuild): string {
  return `pid ${running.pid} on ${running.host}, since ${new Date(running.startedAt).toISOString()}, rebuilding ${running.projections.join(', ')}`;
}

/** Another rebuild holds the lease: this one does not start. */
export class RebuildRunning extends Error {
  constructor(readonly running: RunningRebuild) {
    super(
      `another rebuild is running (${describeRebuild(running)}); wait for it to finish. ` +
        `It renews its lease every ${LEASE_RENEW_MS / 1000} s: if it is gone, its lease lapses by ${new Date(running.expiresAt).toISOString()}`,
    );
  }
}

/**
 * The lease of a running rebuild: one rebuild at a time, whatever projections it rebuilds. Two at
 * once built the same generation side by side and switched twice (found by a review). Renewed
 * while the rebuild runs; `check` fails once another rebuild has taken it over (this one stalled
 * longer than the lease lasts), so the rebuild stops.
 */
export class RebuildLease {
  /** why the lease is no longer this rebuild's, once another took it over */
  private lost: string | null = null;
  /** the lease's writes, one after the other; settled, whatever their outcome */
  private writing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly store: ReadStore,
    private lease: RebuildLeaseDocument,
    private readonly owner: ReturnType<typeof processOwner>,
  ) {
    this.timer = setInterval(() => void this.renew(), LEASE_RENEW_MS);
    this.timer.unref();
  }

  /** Takes the lease, or throws RebuildRunning naming the rebuild that holds it. */
  static async acquire(store: ReadStore, projections: string[], now = Date.now()): Promise<RebuildLease> {
    const current = await readRebuildLease(store);
    const running = runningRebuild(current, now);
    if (running) throw new RebuildRunning(running);
    const owner = processOwner();
    const lease: RebuildLeaseDocument = {
      id: LEASE_ID,
      term: (current?.term ?? 0) + 1,
      token: owner.token,
      host: owner.host,
      pidNamespace: owner.pidNamespace,
      pid: owner.pid,
      projections,
      startedAt: now,
      expiresAt: now + LEASE_TTL_MS,
    };
    let failure: unknown = null;
    try {
      await store.upsert([{ collection: REBUILD_LEASE, document: lease, guard: { field: 'term', value: lease.term } }]);
    } catch (error) {
      // Two first leases inserted at once: MongoDB refuses the second (duplicate key). Who won is read below.
      failure = error;
    }
    const stored = await readRebuildLease(store);
    if (stored?.token === lease.token) return new RebuildLease(store, stored, owner);
    owner.release();
    const winner = runningRebuild(stored, now);
    if (winner) throw new RebuildRunning(winner);
    throw failure ?? new Error('another rebuild took the rebuild lease at the same moment and is gone already: run this one again');
  }

  /** Throws when another rebuild has taken the lease over. */
  check(): void {
    if (this.lost) throw new Error(`the rebuild lease was taken over by another rebuild (${this.lost}): this one stopped`);
  }

  private write(expiresAt: number): Promise<void> {
    const written = this.writing.then(async () => {
      if (this.lost) return;
      const next = { ...this.lease, term: this.lease.term + 1, expiresAt };
      const applied = await this.store.upsert([{ collection: REBUILD_LEASE, document: next, guard: { field: 'term', value: next.term } }]);
      if (applied > 0) {
        this.lease = next;
        return;
      }
      this.owner.release();
      const taker = await readRebuildLease(this.store);
      this.lost = taker ? describeRebuild(taker) : 'its lease is gone';
    });
    this.writing = written.catch(() => undefined);
    return written;
  }

  private async renew(): Promise<void> {
    // An error renewing is not the rebuild's: the next renewal tries again, and a lease that lapses meanwhile is taken over, which `check` reports.
    await this.write(Date.now() + LEASE_TTL_MS).catch(() => undefined);
  }

  /**
   * Gives the lease back: the next rebuild may start at once. Never fails: the rebuild's own
   * outcome is what the command reports, and a lease not given back lapses (at once on this host,
   * where its process is seen gone).
   */
  async release(): Promise<void> {
    clearInterval(this.timer);
    await this.write(0).catch(() => undefined);
    this.owner.release();
  }
}
