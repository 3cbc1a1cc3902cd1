import type { RecordedEvent, SubscribeOptions } from './event-store.port';

/** A sleep that can be cut short: by a new append, or by stop(). */
export class Sleeper {
  private wakeUp: (() => void) | null = null;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wakeUp = (): void => {
        clearTimeout(timer);
        if (this.wakeUp === wakeUp) this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(wakeUp, ms);
      this.wakeUp = wakeUp;
    });
  }

  interrupt(): void {
    this.wakeUp?.();
  }
}

/** Exponential backoff: base, 2×base, 4×base … capped at max. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(baseMs * 2 ** Math.min(attempt - 1, 20), maxMs);
}

/**
 * Hands events to a subscription's handler (one event, or the batch to a batch handler) until it
 * succeeds, reporting each failure and backing off between attempts; false when the
 * subscription stops first. Every adapter's subscription delivers through this.
 */
export async function handOver(
  events: RecordedEvent[],
  options: Pick<SubscribeOptions, 'handler' | 'handleBatch'>,
  retry: { retryDelayMs: number; maxRetryDelayMs: number },
  backoff: Sleeper,
  stopped: () => boolean,
  report: (error: unknown) => void,
): Promise<boolean> {
  for (let attempt = 1; !stopped(); attempt++) {
    try {
      await (options.handleBatch ? options.handleBatch(events) : options.handler!(events[0]));
      return true;
    } catch (error) {
      report(error);
      await backoff.sleep(backoffDelay(attempt, retry.retryDelayMs, retry.maxRetryDelayMs));
    }
  }
  return false;
}
