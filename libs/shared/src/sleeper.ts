/**
 * A sleep that can be cut short: by new work (an append, a publish), or by stop(). Several sleeps
 * may be in progress at once (a Kafka consumer backs off on each of its partitions side by side);
 * one interrupt wakes them all, so stop() never waits out the backoff of one that failed earlier.
 */
export class Sleeper {
  private readonly wakeUps = new Set<() => void>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wakeUp = (): void => {
        clearTimeout(timer);
        this.wakeUps.delete(wakeUp);
        resolve();
      };
      const timer = setTimeout(wakeUp, ms);
      this.wakeUps.add(wakeUp);
    });
  }

  interrupt(): void {
    for (const wakeUp of [...this.wakeUps]) wakeUp();
  }
}

/** Exponential backoff: base, 2×base, 4×base … capped at max. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(baseMs * 2 ** Math.min(attempt - 1, 20), maxMs);
}
