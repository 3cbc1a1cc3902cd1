import { REQUEST_RETRY_WINDOW_MS } from '@lib/shared';
import { afterAttempt, deliveryId, isInFlight, redelivered, retryDelay, withoutLineItems, type DeliveryRecord, type WebhookEnvelope } from './delivery';

const SCHEDULE = [0, 60_000, 300_000, 900_000];

function record(overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    id: 'evt_1',
    type: 'lead.created',
    entityType: 'lead',
    entityId: 'lead_1',
    status: 'processing',
    attempts: 0,
    maxAttempts: SCHEDULE.length,
    lastError: null,
    scheduledFor: 1_000,
    deliveredAt: null,
    createdAt: 1_000,
    updatedAt: 1_000,
    organizationId: 'org_1',
    generation: 1,
    target: 'webhook',
    fastPath: false,
    payload: { version: '1.0', id: 'evt_1', event: 'lead.created', eventType: 'lead.created', timestamp: '', organization: { id: 'org_1', name: 'O', slug: 'o' }, orgLocale: 'en', customerLocale: null, data: {} },
    sourceEventId: 'e1',
    lastAttemptAt: null,
    leaseUntil: 50_000,
    _rev: 2,
    ...overrides,
  };
}

describe('delivery records', () => {
  describe('retryDelay', () => {
    it('given a zero delay, then there is no jitter', () => {
      expect(retryDelay(SCHEDULE, 0, () => 0.99)).toBe(0);
    });

    it('given the extremes of the random source, then the delay is never below the configured one and at most 10 % above it', () => {
      expect(retryDelay(SCHEDULE, 1, () => 0)).toBe(60_000);
      expect(retryDelay(SCHEDULE, 1, () => 0.5)).toBe(63_000);
      expect(retryDelay(SCHEDULE, 1, () => 0.999999)).toBe(65_999);
    });

    it('given many draws, then no attempt comes earlier than configured, none more than 10 % later, and they spread out', () => {
      const draws = Array.from({ length: 500 }, () => retryDelay(SCHEDULE, 2));
      for (const d of draws) {
        expect(d).toBeGreaterThanOrEqual(300_000);
        expect(d).toBeLessThanOrEqual(330_000);
      }
      expect(new Set(draws).size).toBeGreaterThan(100);
    });

    it('given an index past the schedule, then the last delay applies', () => {
      expect(retryDelay(SCHEDULE, 10, () => 0)).toBe(900_000);
    });
  });

  describe('afterAttempt', () => {
    const half = () => 0.5;

    it('given a 2xx, then delivered, with deliveredAt set once', () => {
      const next = afterAttempt(record({ attempts: 1, lastError: 'HTTP 500' }), { delivered: true }, 70_000, SCHEDULE, half);
      expect(next).toMatchObject({ status: 'delivered', attempts: 2, deliveredAt: 70_000, lastAttemptAt: 70_000, leaseUntil: null, lastError: 'HTTP 500' });
      const again = afterAttempt(record({ deliveredAt: 5 }), { delivered: true }, 80_000, SCHEDULE, half);
      expect(again.deliveredAt).toBe(5);
    });

    it('given a retryable failure with budget left, then pending again, due after the next delay of the schedule', () => {
      const next = afterAttempt(record(), { delivered: false, error: 'HTTP 500', terminal: false }, 10_000, SCHEDULE, half);
      expect(next).toMatchObject({ status: 'pending', attempts: 1, lastError: 'HTTP 500', scheduledFor: 10_000 + 63_000, leaseUntil: null });
    });

    it('given the lowest random draw, then the retry is due exactly the configured delay later, never earlier', () => {
      const next = afterAttempt(record({ attempts: 1 }), { delivered: false, error: 'timeout', terminal: false }, 10_000, SCHEDULE, () => 0);
      expect(next.scheduledFor).toBe(10_000 + 300_000);
    });

    it('given a terminal failure (410), then failed at once', () => {
      const next = afterAttempt(record(), { delivered: false, error: 'HTTP 410', terminal: true }, 10_000, SCHEDULE, half);
      expect(next).toMatchObject({ status: 'failed', attempts: 1, lastError: 'HTTP 410' });
    });

    it('given the last attempt of the budget fails, then failed', () => {
      const next = afterAttempt(record({ attempts: 3 }), { delivered: false, error: 'timeout', terminal: false }, 10_000, SCHEDULE, half);
      expect(next).toMatchObject({ status: 'failed', attempts: 4, lastError: 'timeout' });
    });
  });

  describe('redelivered', () => {
    it('given a failed record, then pending with a fresh budget, the next generation and the same id', () => {
      const next = redelivered(record({ status: 'failed', attempts: 4, generation: 1, lastError: 'HTTP 500' }), 100_000, SCHEDULE, undefined, () => 0.5);
      expect(next).toMatchObject({ id: 'evt_1', status: 'pending', attempts: 0, maxAttempts: 4, generation: 2, scheduledFor: 100_000 });
    });

    it('given a schedule whose first delay is not zero, then the redelivery is not due before that delay', () => {
      const next = redelivered(record({ status: 'failed' }), 100_000, [5_000, 60_000], undefined, () => 0);
      expect(next.scheduledFor).toBe(105_000);
    });

    it('remembers each keyed request that redelivered within the retry window, whatever came between, and forgets older ones', () => {
      const first = redelivered(record({ status: 'failed' }), 100_000, SCHEDULE, 'redeliver_a');
      const unkeyed = redelivered({ ...first, status: 'delivered' }, 200_000, SCHEDULE);
      const second = redelivered({ ...unkeyed, status: 'delivered' }, 300_000, SCHEDULE, 'redeliver_b');
      expect(second.redeliveredBy).toEqual({ redeliver_a: 100_000, redeliver_b: 300_000 });
      const dayLater = redelivered({ ...second, status: 'delivered' }, 100_000 + REQUEST_RETRY_WINDOW_MS, SCHEDULE);
      expect(dayLater.redeliveredBy).toEqual({ redeliver_b: 300_000 });
      expect(redelivered(record({ status: 'failed' }), 100_000, SCHEDULE).redeliveredBy).toBeUndefined();
    });

    it('knows which statuses are in flight', () => {
      expect(['pending', 'processing', 'delivered', 'failed'].map((status) => isInFlight({ status } as DeliveryRecord))).toEqual([true, true, false, false]);
    });
  });

  it('derives the same id from the same domain event and draft, another for anything else', () => {
    expect(deliveryId('e1', 'quote.sent', 'q1')).toBe(deliveryId('e1', 'quote.sent', 'q1'));
    expect(deliveryId('e1', 'quote.sent', 'q1')).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(deliveryId('e2', 'quote.sent', 'q1')).not.toBe(deliveryId('e1', 'quote.sent', 'q1'));
    expect(deliveryId('e1', 'quote.viewed', 'q1')).not.toBe(deliveryId('e1', 'quote.sent', 'q1'));
  });

  describe('withoutLineItems', () => {
    const envelope = (data: unknown) => ({ version: '1.0', id: 'evt_1', event: 'quote.created', eventType: 'quote.created', data }) as unknown as WebhookEnvelope;

    it('leaves out every lineItems array of the data, says so where each was, and keeps everything else', () => {
      const reduced = withoutLineItems(
        envelope({ quote: { id: 'quo_1', total: 10 }, lineItems: [{ description: 'x' }], pricing: { source: 'external', lineItems: [], subtotal: 10 } }),
      );
      expect(reduced).toEqual(
        envelope({ quote: { id: 'quo_1', total: 10 }, lineItemsOmitted: true, pricing: { source: 'external', lineItemsOmitted: true, subtotal: 10 } }),
      );
    });

    it('gives null when there are no line items to leave out', () => {
      expect(withoutLineItems(envelope({ lead: { id: 'lea_1', message: 'x'.repeat(10) } }))).toBeNull();
      expect(withoutLineItems(envelope({ lineItems: 'not a list' }))).toBeNull();
    });
  });
});
