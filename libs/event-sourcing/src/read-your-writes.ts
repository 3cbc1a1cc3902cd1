import { Injectable } from '@nestjs/common';
import { Unavailable } from '@lib/shared';

type Waiter = { position: number; resolve: () => void };

/**
 * Lets a write return only after every projection has applied it, so an immediate GET sees it.
 * Projectors report their progress here; when the projector runs in another process, a poller
 * (see ProjectorProgressPoller) reports the checkpoints it reads from the read store.
 */
@Injectable()
export class ReadYourWrites {
  private readonly progress = new Map<string, number>();
  private waiters: Waiter[] = [];
  timeoutMs = 10_000;

  /** Declares the projections whose progress a write waits for. */
  track(names: string[]): void {
    for (const name of names) if (!this.progress.has(name)) this.progress.set(name, 0);
  }

  trackedNames(): string[] {
    return [...this.progress.keys()];
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

  async waitFor(position: number): Promise<void> {
    if (this.progress.size === 0 || this.minimum() >= position) return;
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { position, resolve: () => { clearTimeout(timer); resolve(); } };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Unavailable('The write was stored but the read side is lagging; it will appear shortly.'));
      }, this.timeoutMs);
      timer.unref?.();
      this.waiters.push(waiter);
    });
  }
}
