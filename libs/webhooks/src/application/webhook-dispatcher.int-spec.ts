import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { SqliteEventStore } from '@lib/event-store';
import { SigningSecretSeal } from '@lib/organizations/application/signing-secret-seal';
import { SqliteReadStore } from '@lib/read-store';
import { loadConfig, SystemClock } from '@lib/shared';
import type { DeliveryRecord } from '../domain/delivery';
import { PayloadFinalizerRegistry } from '../registries';
import { WebhookSender, type SendResult, type WebhookRequest } from '../transport/webhook-sender';
import { DeliverySignal } from './delivery-signal';
import { DeliveryStore } from './delivery-store';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookOrganizations } from './webhook-organizations';

/** A receiver without a network: answers when the test says so, and counts what is in flight. */
class FakeSender extends WebhookSender {
  inFlight = 0;
  maxInFlight = 0;
  readonly sent: WebhookRequest[] = [];
  private gate: Promise<void> | null = null;
  private open: (() => void) | null = null;

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open?.();
    this.gate = null;
  }

  async send(request: WebhookRequest): Promise<SendResult> {
    this.sent.push(request);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await (this.gate ?? new Promise((resolve) => setTimeout(resolve, 20)));
      return { kind: 'response', status: 200 };
    } finally {
      this.inFlight--;
    }
  }
}

function record(id: string, overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  const now = Date.now();
  return {
    id, type: 'lead.created', entityType: 'lead', entityId: id, status: 'pending', attempts: 0, maxAttempts: 2, lastError: null,
    scheduledFor: now, deliveredAt: null, createdAt: now, updatedAt: now, organizationId: 'org_1', generation: 1, target: 'webhook', fastPath: false,
    payload: { version: '1.0', id, event: 'lead.created', eventType: 'lead.created', timestamp: new Date(now).toISOString(), organization: { id: 'org_1', name: 'O', slug: 'o' }, orgLocale: 'en', customerLocale: null, data: {} },
    sourceEventId: `src_${id}`, lastAttemptAt: null, leaseUntil: null, _rev: 1,
    ...overrides,
  };
}

async function until(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('WebhookDispatcher with the embedded stores', () => {
  let events: SqliteEventStore;
  let reads: SqliteReadStore;
  let store: DeliveryStore;
  let sender: FakeSender;
  let dispatcher: WebhookDispatcher;

  beforeEach(async () => {
    events = new SqliteEventStore({ file: ':memory:' });
    reads = new SqliteReadStore({ file: ':memory:' });
    store = new DeliveryStore(reads);
    await store.ensureIndexes();
    await events.appendToStream('organization-org_1', [
      { type: 'organization.v1.created', data: { organizationId: 'org_1', profile: { name: 'O', slug: 'o', locale: 'en', unitSystem: 'metric', currency: 'EUR', plan: 'pro' }, settings: { webhookUrl: 'https://receiver.example/hooks', pricingWebhookUrl: null, externalPricingEnabled: false, pricingTimeoutMs: 10_000, quoteDefaults: { taxRate: 0, validityDays: 30 } }, at: 0 } },
      { type: 'organization.v1.signingSecretRotated', data: { organizationId: 'org_1', secretId: 's1', secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, previousValidUntil: 0, at: 0 } },
    ], 'no_stream');
    sender = new FakeSender();
    dispatcher = new WebhookDispatcher(
      store, new WebhookOrganizations(events, new SigningSecretSeal(randomBytes(32))), new PayloadFinalizerRegistry(), sender, new DeliverySignal(), new SystemClock(),
      loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '0,10' }), { attemptTimeoutMs: 1_000, concurrency: 2, pollIntervalMs: 60_000 },
    );
  });
  afterEach(async () => {
    await dispatcher.stop();
    await reads.close();
    await events.close();
  });

  const statuses = async (ids: string[]) => Promise.all(ids.map(async (id) => (await store.get(id))!.status));

  it('given more due deliveries than its concurrency, then never more than that many are in flight and all are delivered', async () => {
    const ids = ['evt_a', 'evt_b', 'evt_c', 'evt_d', 'evt_e', 'evt_f'];
    await store.createMissing(ids.map((id) => record(id)));
    await dispatcher.start();
    await until(async () => (await statuses(ids)).every((s) => s === 'delivered'));
    expect(sender.maxInFlight).toBe(2);
    expect(sender.sent).toHaveLength(6);
  });

  it('given a stop while an attempt is in flight, then stop waits for it and its outcome is recorded', async () => {
    sender.hold();
    await store.createMissing([record('evt_slow')]);
    await dispatcher.start();
    await until(async () => sender.inFlight === 1);
    let stopped = false;
    const stopping = dispatcher.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stopped).toBe(false);
    sender.release();
    await stopping;
    expect(await store.get('evt_slow')).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('given records left processing by a dead process, then start-up returns them to pending and sends them', async () => {
    await store.createMissing([record('evt_orphan', { status: 'processing', leaseUntil: Date.now() + 3_600_000 })]);
    await dispatcher.start();
    await until(async () => (await store.get('evt_orphan'))!.status === 'delivered');
    expect(sender.sent.map((r) => r.headers['X-Service-Delivery'])).toEqual(['evt_orphan']);
  });

  it("given records left processing by this host's dead process, then start-up sends them again at once", async () => {
    await store.createMissing([record('evt_mine', { status: 'processing', leaseUntil: Date.now() + 3_600_000, leaseOwner: hostname() })]);
    await dispatcher.start();
    await until(async () => (await store.get('evt_mine'))!.status === 'delivered');
    expect(await store.get('evt_mine')).toMatchObject({ leaseOwner: null, attempts: 1 });
  });

  it("given an attempt another host's outbox is making, then start-up leaves it alone until its lease runs out", async () => {
    const [theirs] = await store.createMissing([record('evt_theirs', { status: 'processing', leaseUntil: Date.now() + 3_600_000, leaseOwner: 'another-host' })]);
    await store.createMissing([record('evt_lapsed', { status: 'processing', leaseUntil: Date.now() - 1, leaseOwner: 'another-host' })]);
    await dispatcher.start();
    await until(async () => (await store.get('evt_lapsed'))!.status === 'delivered');
    expect(await store.get('evt_theirs')).toMatchObject({ status: 'processing', _rev: theirs._rev });
    expect(sender.sent.map((r) => r.headers['X-Service-Delivery'])).toEqual(['evt_lapsed']);
  });

  it('given a retry due later, then it is attempted at that time without waiting for a poll', async () => {
    await store.createMissing([record('evt_later', { scheduledFor: Date.now() + 120 })]);
    await dispatcher.start();
    expect(sender.sent).toHaveLength(0);
    await until(async () => (await store.get('evt_later'))!.status === 'delivered');
    expect(sender.sent).toHaveLength(1);
  });

  it('given two writers race on the same record, then exactly one compare-and-set wins', async () => {
    const [created] = await store.createMissing([record('evt_race')]);
    const results = await Promise.all([
      store.compareAndSet(created, { ...created, status: 'processing' }),
      store.compareAndSet(created, { ...created, status: 'failed' }),
      store.compareAndSet(created, { ...created, status: 'delivered' }),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await store.get('evt_race'))!.status).toBe(results.find(Boolean)!.status);
    expect(await store.createMissing([record('evt_race')])).toEqual([]);
  });
});
