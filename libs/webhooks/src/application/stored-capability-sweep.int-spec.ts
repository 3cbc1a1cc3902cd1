import { SqliteEventStore } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import { loadConfig } from '@lib/shared';
import type { DeliveryRecord } from '../domain/delivery';
import { PayloadFinalizerRegistry } from '../registries';
import { QuoteLinkFinalizer } from '../sources/quote-link.finalizer';
import { DeliveryStore } from './delivery-store';
import { StoredCapabilitySweep, SWEEP_DONE } from './stored-capability-sweep';

const LINK = 'http://localhost:3000/q/legacy-token';

function quoteSent(id: string, quote: Record<string, unknown>, overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    id, type: 'quote.sent', entityType: 'quote', entityId: 'quo_1', status: 'delivered', attempts: 1, maxAttempts: 8, lastError: null,
    scheduledFor: 0, deliveredAt: 1, createdAt: 0, updatedAt: 1, organizationId: 'org_1', generation: 1, target: 'webhook', fastPath: false,
    payload: { version: '1.0', id, event: 'quote.sent', eventType: 'quote.sent', timestamp: new Date(0).toISOString(), organization: { id: 'org_1', name: 'O', slug: 'o' }, orgLocale: 'en', customerLocale: null, data: { quote: { id: 'quo_1', ...quote } } },
    sourceEventId: `src_${id}`, lastAttemptAt: 1, leaseUntil: null, _rev: 1,
    ...overrides,
  };
}

describe('StoredCapabilitySweep with the embedded read store', () => {
  let reads: SqliteReadStore;
  let store: DeliveryStore;
  let sweep: StoredCapabilitySweep;

  beforeEach(async () => {
    reads = new SqliteReadStore({ file: ':memory:' });
    store = new DeliveryStore(reads);
    await store.ensureIndexes();
    const finalizers = new PayloadFinalizerRegistry();
    finalizers.register(new QuoteLinkFinalizer(new SqliteEventStore({ file: ':memory:' }), loadConfig({})));
    sweep = new StoredCapabilitySweep(store, reads, finalizers);
  });
  afterEach(() => reads.close());

  it('removes the quote link from every stored quote.sent record, over several pages, and leaves everything else as it was', async () => {
    const legacy = Array.from({ length: 450 }, (_, i) => quoteSent(`dlv_${String(i).padStart(4, '0')}`, { number: i, customerUrl: LINK }));
    const clean = quoteSent('dlv_clean', { number: -1 });
    await store.createMissing([...legacy, clean]);

    expect(await sweep.run()).toBe(450);

    for (const { id } of [legacy[0], legacy[199], legacy[200], legacy[449]]) {
      const stored = await store.get(id);
      expect(stored?.payload.data).toEqual({ quote: { id: 'quo_1', number: Number(id.slice(4)) } });
      expect({ ...stored, payload: undefined, _rev: undefined, _w: undefined }).toEqual({ ...legacy[Number(id.slice(4))], payload: undefined, _rev: undefined });
    }
    expect((await store.get('dlv_clean'))?._rev).toBe(1);
    expect(await reads.getCheckpoint(SWEEP_DONE)).toBe(1);
  });

  it('runs once: after it has finished, a later start looks at nothing', async () => {
    await sweep.run();
    await store.createMissing([quoteSent('dlv_late', { customerUrl: LINK })]);
    expect(await sweep.run()).toBe(0);
    expect((await store.get('dlv_late'))?.payload.data).toEqual({ quote: { id: 'quo_1', customerUrl: LINK } });
  });

  it('reads a record again when it changed under the sweep, and keeps the other writer\'s change', async () => {
    const [record] = await store.createMissing([quoteSent('dlv_1', { customerUrl: LINK }, { status: 'failed' })]);
    // A redelivery lands between the sweep's read and its write.
    const original = store.findByType.bind(store);
    jest.spyOn(store, 'findByType').mockImplementationOnce(async (...args) => {
      const page = await original(...args);
      await store.compareAndSet(record, { ...record, status: 'pending', generation: 2 });
      return page;
    });
    expect(await sweep.run()).toBe(1);
    const stored = await store.get('dlv_1');
    expect(stored).toMatchObject({ status: 'pending', generation: 2, _rev: 3 });
    expect(stored?.payload.data).toEqual({ quote: { id: 'quo_1' } });
  });
});
