import { Injectable } from '@nestjs/common';
import { Unavailable, WriteStoredNotYetVisible } from '@lib/shared';

type Waiter = { position: number; since: number; resolve: () => void };

/**
 * Lets a write return only after every projection has applied it, so an immediate GET sees it.
 * Projectors report their progress here; when the projector runs in another process, a poller
 * (see ProjectorProgressPoller) reports the checkpoints it reads from the read store.
 */
@Injectable()
export class ReadYourWrites {
  private readonly progress = new Map<string, number>();
  /** in the order they started waiting: the first is the oldest */
  private waiters: Waiter[] = [];
  /** the highest position a write waited for in vain: the read side is behind until it reaches it */
  private missed = 0;
  timeoutMs = 10_000;
  /** how long a write may have been waiting before the next ones are refused unwritten */
  refuseWritesAfterMs = 5_000;
  private readonly waitingListeners: Array<() => void> = [];

  /** Declares the projections whose progress a write waits for. */
  track(names: string[]): void {
    for (const name of names) if (!this.progress.has(name)) this.progress.set(name, 0);
  }

  trackedNames(): string[] {
    return [...this.progress.keys()];
  }

  /** How far the projection's progress confirmed writes (0 before its first report). */
  progressOf(name: string): number {
    return this.progress.get(name) ?? 0;
  }

  report(name: string, position: number): void {
    if ((this.progress.get(name) ?? -1) >= position) return;
    this.progress.set(name, position);
    const reached = this.minimum();
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.position <= reached) waiter.resolve();
      else still.push(waiter);
    }
    this.waiters = still;
  }

  minimum(): number {
    let min = Number.POSITIVE_INFINITY;
    for (const value of this.progress.values()) min = Math.min(min, value);
    return min;
  }

  /**
   * Refuses a write before it is made while the read side is known to be behind: a write waited
   * for it in vain, or has been waiting longer than `refuseWritesAfterMs`. The write would be
   * stored and then answered 503 after the full wait; refused now, nothing is stored, and a
   * retry (with or without an Idempotency-Key) is safe.
   */
  assertKeepingUp(): void {
    // The why (checkpoint names and positions) is for the operator: the log and /readyz say it, not every client (decisions §3).
    if (this.mismatch !== null) throw new Unavailable('Nothing was written: this service refuses writes until an operator repairs its stores. Retry later.');
    if (this.refusingWrites()) throw new Unavailable('The read side is behind; nothing was written. Retry shortly.');
  }

  /** Why no write may be made until the process restarts (refuseWritesForGood), or null. */
  private mismatch: string | null = null;

  /**
   * Refuses every write until the process restarts: the read store does not belong to the event
   * log (its checkpoints were past the log's head at start-up). A write would take a position the
   * projector and the relay count as applied, and be lost to both; the log's head passing the
   * checkpoints does not mend that, a rebuild with every process stopped does (found by a review:
   * six leads were answered 201 and five were lost).
   */
  refuseWritesForGood(reason: string): void {
    this.mismatch = reason;
  }

  /** Why every write is refused until the process restarts (refuseWritesForGood), or null. */
  refusedForGood(): string | null {
    return this.mismatch;
  }

  /** Whether writes are refused now (assertKeepingUp): the read side is known to be behind. */
  refusingWrites(): boolean {
    if (this.mismatch !== null) return true;
    const oldest = this.waiters[0];
    return this.minimum() < this.missed || (oldest !== undefined && performance.now() - oldest.since > this.refuseWritesAfterMs);
  }

  /**
   * Whether progress is wanted now: a write is waiting for it, or one waited in vain and the read
   * side has not reached it yet (writes are refused until it does). A poller reading the progress
   * of a projector in another process reads it often then, and seldom otherwise.
   */
  progressWanted(): boolean {
    return this.waiters.length > 0 || this.refusingWrites();
  }

  /** Calls `listener` whenever a write starts waiting for progress not reported yet. */
  onWaiting(listener: () => void): void {
    this.waitingListeners.push(listener);
  }

  /**
   * Resolves once every projection has applied `position`; WriteStoredNotYetVisible after
   * `timeoutMs`, naming `made` (the ids of what the write created: its 503 is kept under an
   * Idempotency-Key, so the client finds what it made instead of making it again).
   */
  async waitFor(position: number, made?: Record<string, string>): Promise<void> {
    if (this.progress.size === 0 || this.minimum() >= position) return;
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { position, since: performance.now(), resolve: () => { clearTimeout(timer); resolve(); } };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        this.missed = Math.max(this.missed, position);
        reject(new WriteStoredNotYetVisible(made));
      }, this.timeoutMs);
      timer.unref?.();
      this.waiters.push(waiter);
      for (const listener of this.waitingListeners) listener();
    });
  }
}
