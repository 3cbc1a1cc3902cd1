import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { SqliteEventStore } from '@lib/event-store';
import { SigningSecretSeal } from '@lib/organizations/application/signing-secret-seal';
import { SqliteReadStore } from '@lib/read-store';
import { ManualClock, loadConfig, processOwner, SystemClock, type Clock } from '@lib/shared';
import type { DeliveryRecord } from '../domain/delivery';
import { PayloadFinalizerRegistry } from '../registries';
import { NotReadyToSend } from '../webhook-sources';
import { WebhookSender, type SendResult, type WebhookRequest } from '../transport/webhook-sender';
import { DeliverySignal } from './delivery-signal';
import { DeliveryStore } from './delivery-store';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookOrganizations } from './webhook-organizations';

/**
 * Receivers without a network: each host answers 200 shortly, or, once held, hangs until the test
 * releases it with the status it then answers. Counts what is in flight, in all and per host.
 */
class FakeSender extends WebhookSender {
  inFlight = 0;
  maxInFlight = 0;
  readonly sent: WebhookRequest[] = [];
  private readonly inFlightAt = new Map<string, number>();
  private readonly maxInFlightAt = new Map<string, number>();
  private readonly gates = new Map<string, { opened: Promise<number>; open: (status: number) => void }>();
  private readonly nextStatus = new Map<string, number>();

  /** Requests to `host` (all of them when omitted) hang until released. */
  hold(host = '*'): void {
    let open!: (status: number) => void;
    const opened = new Promise<number>((resolve) => (open = resolve));
    this.gates.set(host, { opened, open });
  }

  /** The requests held at `host` get `status`; later ones are answered at once. */
  release(host = '*', status = 200): void {
    this.gates.get(host)?.open(status);
    this.gates.delete(host);
  }

  /** The next request to `host` is answered with `status`. */
  answerNext(host: string, status: number): void {
    this.nextStatus.set(host, status);
  }

  inFlightTo(host: string): number {
    return this.inFlightAt.get(host) ?? 0;
  }

  maxInFlightTo(host: string): number {
    return this.maxInFlightAt.get(host) ?? 0;
  }

  sentTo(host: string): WebhookRequest[] {
    return this.sent.filter((request) => new URL(request.url).host === host);
  }

  async send(request: WebhookRequest): Promise<SendResult> {
    const host = new URL(request.url).host;
    this.sent.push(request);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.inFlightAt.set(host, this.inFlightTo(host) + 1);
    this.maxInFlightAt.set(host, Math.max(this.maxInFlightTo(host), this.inFlightTo(host)));
    try {
      const gate = this.gates.get(host) ?? this.gates.get('*');
      const next = this.nextStatus.get(host);
      this.nextStatus.delete(host);
      const status = gate ? await gate.opened : await new Promise<number>((resolve) => setTimeout(() => resolve(next ?? 200), 20));
      return { kind: 'response', status };
    } finally {
      this.inFlight--;
      this.inFlightAt.set(host, this.inFlightTo(host) - 1);
    }
  }
}

/** Receiver hosts: org_1's webhooks and pricing partner, one that org_2 and org_3 share (made to hang by tests), org_4's. */
const RECEIVER = 'receiver.example';
const PRICING = 'pricing.example';
const SLOW = 'slow.example';
const OTHER = 'other.example';

function organizationCreated(organizationId: string, webhookUrl: string, pricingWebhookUrl: string | null) {
  return [
    { type: 'organization.v1.created', data: { organizationId, profile: { name: 'O', slug: organizationId, locale: 'en', unitSystem: 'metric', currency: 'EUR', plan: 'pro' }, settings: { webhookUrl, pricingWebhookUrl, externalPricingEnabled: pricingWebhookUrl !== null, pricingTimeoutMs: 10_000, quoteDefaults: { taxRate: 0, validityDays: 30 } }, at: 0 } },
    { type: 'organization.v1.signingSecretRotated', data: { organizationId, secretId: 's1', secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, previousValidUntil: 0, at: 0 } },
  ];
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

/** A pricing.calculated record, as the pricing source makes them (fast path). */
function pricingRecord(id: string, overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return record(id, { type: 'pricing.calculated', entityType: 'session', target: 'pricing', fastPath: true, ...overrides });
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
  let signal: DeliverySignal;
  let finalizers: PayloadFinalizerRegistry;
  let dispatcher: WebhookDispatcher;

  /** A dispatcher with `concurrency` attempts per lane; its per-organization cap of ordinary attempts is half of that, at least 1. */
  function dispatcherWith(concurrency: number, clock: Clock = new SystemClock()): WebhookDispatcher {
    return new WebhookDispatcher(
      store, new WebhookOrganizations(events, new SigningSecretSeal(randomBytes(32))), finalizers, sender, signal, clock,
      loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '0,10', PRICING_RETRY_SCHEDULE_MS: '0,60000' }), { attemptTimeoutMs: 1_000, concurrency, pollIntervalMs: 60_000 },
    );
  }

  /** Creates pending records and tells the dispatcher, as the delivery reactor does. */
  async function created(...records: DeliveryRecord[]): Promise<void> {
    for (const stored of await store.createMissing(records)) signal.pending(stored);
  }

  beforeEach(async () => {
    events = new SqliteEventStore({ file: ':memory:' });
    reads = new SqliteReadStore({ file: ':memory:' });
    store = new DeliveryStore(reads);
    await store.ensureIndexes();
    await events.appendToStream('organization-org_1', organizationCreated('org_1', `https://${RECEIVER}/hooks`, `https://${PRICING}/calculated`), 'no_stream');
    await events.appendToStream('organization-org_2', organizationCreated('org_2', `https://${SLOW}/hooks`, null), 'no_stream');
    await events.appendToStream('organization-org_3', organizationCreated('org_3', `https://${SLOW}/hooks`, null), 'no_stream');
    await events.appendToStream('organization-org_4', organizationCreated('org_4', `https://${OTHER}/hooks`, null), 'no_stream');
    sender = new FakeSender();
    signal = new DeliverySignal();
    finalizers = new PayloadFinalizerRegistry();
    dispatcher = dispatcherWith(2);
  });
  afterEach(async () => {
    sender.release(SLOW);
    sender.release(PRICING);
    sender.release();
    await dispatcher.stop();
    await reads.close();
    await events.close();
  });

  const statuses = async (ids: string[]) => Promise.all(ids.map(async (id) => (await store.get(id))!.status));

  it('given more due deliveries than its concurrency, then never more than that many are in flight and all are delivered', async () => {
    const ids = ['evt_a', 'evt_b', 'evt_c', 'evt_d', 'evt_e', 'evt_f'];
    await store.createMissing(ids.map((id, i) => record(id, { organizationId: `org_${(i % 3) + 1}` })));
    await dispatcher.start();
    await until(async () => (await statuses(ids)).every((s) => s === 'delivered'));
    expect(sender.maxInFlight).toBe(2);
    expect(sender.sent).toHaveLength(6);
  });

  it('given a store that refuses the claims (a full disk), then it looks again after its poll interval, not in a busy loop, and delivers once the store takes writes', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `evt_${i}`);
    await store.createMissing(ids.map((id, i) => record(id, { organizationId: `org_${(i % 4) + 1}` })));
    const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const claims = jest.spyOn(store, 'compareAndSet').mockRejectedValue(full);
    dispatcher = dispatcherWith(4);
    await dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // One look claims at most a lane's worth; the next waits for the poll interval (60 s here).
    expect(claims.mock.calls.length).toBeLessThanOrEqual(8);
    claims.mockRestore();
    dispatcher.wake();
    await until(async () => (await statuses(ids)).every((s) => s === 'delivered'));
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

  it('given attempts of this host in another PID namespace (a restarted container), then start-up makes them again at once', async () => {
    const restarted = `${hostname()}/1${String(Date.now()).slice(-9)}/1/123e4567-e89b-42d3-a456-426614174000`;
    await store.createMissing([record('evt_container', { status: 'processing', leaseUntil: Date.now() + 3_600_000, leaseOwner: restarted })]);
    await dispatcher.start();
    await until(async () => (await store.get('evt_container'))!.status === 'delivered');
  });

  it('given attempts of outboxes of this host while it runs, then its lease check makes again those whose process is gone, and leaves a running one alone', async () => {
    const clock = new ManualClock(Date.now());
    const running = dispatcherWith(2, clock);
    await running.start();
    const gone = processOwner(); // a process of this host that is gone: its owner no longer used
    gone.release();
    const sibling = processOwner(); // another outbox of this host, running
    try {
      await store.createMissing([record('evt_gone', { status: 'processing', leaseUntil: Date.now() + 3_600_000, leaseOwner: gone.id })]);
      const [theirs] = await store.createMissing([record('evt_running', { status: 'processing', leaseUntil: Date.now() + 3_600_000, leaseOwner: sibling.id })]);
      clock.advance(60_000); // the next lease check is due
      running.wake();
      await until(async () => (await store.get('evt_gone'))!.status === 'delivered');
      expect(await store.get('evt_running')).toMatchObject({ status: 'processing', _rev: theirs._rev });
      expect(sender.sent.map((r) => r.headers['X-Service-Delivery'])).toEqual(['evt_gone']);
    } finally {
      sibling.release();
      await running.stop();
    }
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

  it('given a finalizer that cannot make the attempt yet, then nothing is sent, the record stays pending with its budget, and it is sent once the finalizer can', async () => {
    let refusals = 2;
    finalizers.register({
      eventType: 'pricing.calculated',
      finalize: async ({ payload }) => {
        if (refusals-- > 0) throw new NotReadyToSend('the read side is behind');
        return { ...payload, finalized: true };
      },
    });
    // One attempt in the budget: a postponement that counted would fail the delivery.
    await created(pricingRecord('evt_not_ready', { maxAttempts: 1 }));
    await dispatcher.start();
    // The refusal is counted before the postponement is written back: wait for both.
    await until(async () => refusals === 1 && (await store.get('evt_not_ready'))!.status === 'pending');
    expect(await store.get('evt_not_ready')).toMatchObject({ status: 'pending', attempts: 0, lastError: null, lastAttemptAt: null });
    expect(sender.sent).toHaveLength(0);
    await until(async () => (await store.get('evt_not_ready'))!.status === 'delivered');
    expect(await store.get('evt_not_ready')).toMatchObject({ attempts: 1, lastError: null });
    expect(sender.sent).toHaveLength(1);
    expect(JSON.parse(sender.sent[0].body)).toMatchObject({ finalized: true });
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

  describe('pricing and ordinary deliveries in lanes of their own', () => {
    /** Two ordinary attempts that hang fill the ordinary lane of a dispatcher with concurrency 2 (one per organization). */
    async function fillOrdinaryLaneWithHangingAttempts(): Promise<void> {
      sender.hold(SLOW);
      await created(record('evt_hang_2', { organizationId: 'org_2' }), record('evt_hang_3', { organizationId: 'org_3' }), record('evt_wait_2', { organizationId: 'org_2' }));
      await until(async () => sender.inFlightTo(SLOW) === 2);
    }

    it('given the ordinary lane full of attempts that hang, then a new pricing event is claimed and sent at once', async () => {
      await dispatcher.start();
      await fillOrdinaryLaneWithHangingAttempts();
      await created(pricingRecord('evt_pricing'));
      await until(async () => (await store.get('evt_pricing'))!.status === 'delivered');
      expect(sender.sentTo(PRICING)).toHaveLength(1);
      expect(sender.inFlightTo(SLOW)).toBe(2);
    });

    it('given the ordinary lane full of attempts that hang, then a pricing retry found by a look at the queue is sent', async () => {
      const clock = new ManualClock(Date.now() + 1_000);
      dispatcher = dispatcherWith(2, clock);
      sender.answerNext(PRICING, 500);
      await dispatcher.start();
      await created(pricingRecord('evt_pricing'));
      await until(async () => (await store.get('evt_pricing'))!.attempts === 1);
      await fillOrdinaryLaneWithHangingAttempts();
      // The retry (PRICING_RETRY_SCHEDULE_MS 0,60000) comes due; only a look at the queue finds it.
      clock.advance(70_000);
      dispatcher.wake();
      await until(async () => (await store.get('evt_pricing'))!.status === 'delivered');
      expect(await store.get('evt_pricing')).toMatchObject({ attempts: 2, lastError: 'HTTP 500' });
      expect(sender.inFlightTo(SLOW)).toBe(2);
    });

    it("given a pricing attempt interrupted by this host's last shutdown and a backlog of ordinary attempts that hang, then start-up sends the pricing one at once", async () => {
      sender.hold(SLOW);
      const past = Date.now() - 60_000;
      await store.createMissing([
        ...Array.from({ length: 6 }, (_, i) => record(`evt_backlog_${i}`, { organizationId: `org_${(i % 2) + 2}`, scheduledFor: past + i })),
        pricingRecord('evt_interrupted', { status: 'processing', leaseUntil: Date.now() + 3_600_000, leaseOwner: hostname() }),
      ]);
      await dispatcher.start();
      await until(async () => (await store.get('evt_interrupted'))!.status === 'delivered');
      expect(sender.inFlightTo(SLOW)).toBe(2);
    });

    it('given the pricing lane full of attempts that hang, then ordinary deliveries are still sent', async () => {
      // Two organizations: one alone takes half of the lane at most.
      await events.appendToStream('organization-org_6', organizationCreated('org_6', `https://${OTHER}/hooks`, `https://${PRICING}/calculated`), 'no_stream');
      sender.hold(PRICING);
      await dispatcher.start();
      await created(pricingRecord('evt_pricing_1'), pricingRecord('evt_pricing_2', { organizationId: 'org_6' }), pricingRecord('evt_pricing_3'));
      await until(async () => sender.inFlightTo(PRICING) === 2);
      await created(record('evt_lead'));
      await until(async () => (await store.get('evt_lead'))!.status === 'delivered');
      expect(sender.inFlightTo(PRICING)).toBe(2);
    });

    it('given attempts in flight in both lanes, then stop waits for both and records their outcomes', async () => {
      await dispatcher.start();
      await fillOrdinaryLaneWithHangingAttempts();
      sender.hold(PRICING);
      await created(pricingRecord('evt_pricing'));
      await until(async () => sender.inFlightTo(PRICING) === 1);
      let stopped = false;
      const stopping = dispatcher.stop().then(() => (stopped = true));
      sender.release(SLOW);
      await until(async () => (await statuses(['evt_hang_2', 'evt_hang_3'])).every((s) => s === 'delivered'));
      // The pricing attempt still hangs: stop cannot have finished.
      expect(stopped).toBe(false);
      sender.release(PRICING);
      await stopping;
      expect(await store.get('evt_pricing')).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(await store.get('evt_wait_2')).toMatchObject({ status: 'pending', attempts: 0 });
    });
  });

  describe('organizations sharing the ordinary lane', () => {
    it("given one organization's receiver hangs with a backlog, then the other organizations' deliveries are sent, it holds half the lane, and its backlog goes out once it answers", async () => {
      dispatcher = dispatcherWith(8);
      sender.hold(SLOW);
      const past = Date.now() - 60_000;
      // Older than the others' records: the whole head of the queue is the hanging organization's.
      const backlog = Array.from({ length: 12 }, (_, i) => record(`evt_backlog_${String(i).padStart(2, '0')}`, { organizationId: 'org_2', scheduledFor: past + i }));
      const others = ['org_1', 'org_4'].flatMap((organizationId) => [1, 2, 3].map((n) => record(`evt_${organizationId}_${n}`, { organizationId })));
      await store.createMissing([...backlog, ...others]);
      await dispatcher.start();
      await until(async () => (await statuses(others.map((r) => r.id))).every((s) => s === 'delivered'));
      expect(sender.inFlightTo(SLOW)).toBe(4);
      // Its receiver answers again: its whole backlog goes out, still four at a time.
      sender.release(SLOW);
      await until(async () => (await statuses(backlog.map((r) => r.id))).every((s) => s === 'delivered'));
      expect(sender.maxInFlightTo(SLOW)).toBe(4);
    });

    it.each([
      { lane: 'pricing', stuck: (id: string) => pricingRecord(id, { organizationId: 'org_5' }), other: (id: string) => pricingRecord(id, { organizationId: 'org_1' }) },
      { lane: 'ordinary', stuck: (id: string) => record(id, { organizationId: 'org_2' }), other: (id: string) => record(id, { organizationId: 'org_4' }) },
    ])("given one organization's $lane receiver hangs with deliveries piling up, then another organization's new $lane delivery is sent at once", async ({ stuck, other }) => {
      await events.appendToStream('organization-org_5', organizationCreated('org_5', `https://${OTHER}/hooks`, `https://${SLOW}/calculated`), 'no_stream');
      dispatcher = dispatcherWith(8);
      sender.hold(SLOW);
      await dispatcher.start();
      await created(...Array.from({ length: 12 }, (_, i) => stuck(`evt_stuck_${String(i).padStart(2, '0')}`)));
      await until(async () => sender.inFlightTo(SLOW) === 4);
      await created(other('evt_other'));
      await until(async () => (await store.get('evt_other'))!.status === 'delivered');
      expect(sender.maxInFlightTo(SLOW)).toBe(4);
    });
  });
});
