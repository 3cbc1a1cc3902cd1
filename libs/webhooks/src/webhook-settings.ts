import type { AppConfig } from '@lib/shared';

/** Knobs of the delivery pipeline, taken from the process configuration. */
export interface WebhookDispatchSettings {
  /** WEBHOOK_ATTEMPT_TIMEOUT_MS: per-attempt timeout of ordinary events (decisions §9: 10 s); pricing events use the organization's pricingTimeoutMs */
  attemptTimeoutMs: number;
  /**
   * WEBHOOK_DISPATCH_CONCURRENCY: attempts in flight at once per outbox process in each lane:
   * this many pricing (fast-path) attempts, and as many ordinary ones beside them
   */
  concurrency: number;
  /** how often the queue is looked at for work written by other processes (the dispatcher also wakes on its own writes and due times) */
  pollIntervalMs: number;
}

export const WEBHOOK_DISPATCH_SETTINGS = Symbol('WEBHOOK_DISPATCH_SETTINGS');

export function webhookDispatchSettings(config: Pick<AppConfig, 'webhookAttemptTimeoutMs' | 'webhookDispatchConcurrency'>): WebhookDispatchSettings {
  return { attemptTimeoutMs: config.webhookAttemptTimeoutMs, concurrency: config.webhookDispatchConcurrency, pollIntervalMs: 500 };
}

/**
 * Attempts one organization may have in flight in each lane: half of it, at least one, so a
 * receiver or pricing partner that hangs holds half the lane at most and the others' deliveries go on. (A quarter cost
 * one organization draining a backlog alone a third of its rate: 940–1,058 deliveries/s against
 * 1,530 uncapped in the issue 3 dispatch benchmark, whose target is 1,000; half gave 1,235–1,373.)
 */
export function concurrencyPerOrganization(concurrency: number): number {
  return Math.max(1, Math.floor(concurrency / 2));
}
