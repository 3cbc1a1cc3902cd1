import { backoffDelay, type Sleeper } from '@lib/shared';
import type { RecordedEvent, SubscribeOptions } from './event-store.port';

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
