import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DELIVERIES, SWEEP_DONE, SWEEP_VERSION, type DeliveryRecord } from '@lib/webhooks';
import { WebhookReceiver } from '@lib/webhooks/testing/webhook-receiver';
import { pause, QuoteFixtures } from './quotes-fixtures';
import { ADMIN_TOKEN, openReadStore, TestApp } from './support/test-app';

const ENV = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE_MS: '0,100,200', WEBHOOK_ATTEMPT_TIMEOUT_MS: '1000' };

/** Deliveries survive the process: an attempt cut short by a stop or a crash is made again after the restart. */
describe('webhooks across a restart (same DATA_DIR)', () => {
  let receiver: WebhookReceiver;
  let dataDir: string;
  let app: TestApp | null = null;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
  });
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'webhooks-restart-'));
  });
  afterEach(async () => {
    await app?.close();
    app = null;
    rmSync(dataDir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await receiver.close();
  });

  async function start(): Promise<TestApp> {
    app = await TestApp.start(ENV, dataDir);
    return app;
  }

  async function stop(): Promise<void> {
    await app!.close();
    app = null;
  }

  async function organization(path: string) {
    const org = await app!.createOrganization({ settings: { webhookUrl: receiver.url(path) } });
    const secret = await app!.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
    expect(secret.status).toBe(201);
    return org;
  }

  async function newLead(slug: string): Promise<string> {
    const res = await app!.request('POST', `/storefront/v1/${slug}/leads`, { body: { name: 'Jane', email: 'jane@example.com', message: 'Hello' } });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  async function delivery(apiKey: string, id: string, until: (r: any) => boolean): Promise<any> {
    let last: any;
    for (let waited = 0; waited < 10_000; waited += 20) {
      last = (await app!.request('GET', `/api/v1/events/${id}`, { token: apiKey })).body;
      if (until(last)) return last;
      await pause(20);
    }
    throw new Error(`delivery ${id} did not reach the expected state; last seen ${JSON.stringify(last)}`);
  }

  it('given the app is stopped while an attempt is in flight, then the next start delivers it with the same delivery id', async () => {
    await start();
    const org = await organization('/restart/stopped');
    receiver.respondWith('/restart/stopped', 'hang');
    const leadId = await newLead(org.slug);
    const [first] = await receiver.waitFor((r) => r.path === '/restart/stopped' && r.body?.data?.lead?.id === leadId);
    const id = first.body.id;
    expect((await app!.request('GET', `/api/v1/events/${id}`, { token: org.apiKey })).body.status).toBe('processing');

    await stop(); // waits for the in-flight attempt (it times out) and records it
    await start();
    const record = await delivery(org.apiKey, id, (r) => r.status === 'delivered');
    expect(record).toMatchObject({ attempts: 2, lastError: 'timeout' });
    const requests = receiver.requests('/restart/stopped');
    expect(requests).toHaveLength(2);
    expect(requests.map((r) => r.headers['x-service-delivery'])).toEqual([id, id]);
    expect(requests[1].rawBody).toBe(requests[0].rawBody);
  });

  it('given a quote.sent whose attempt is cut short by a stop, then the attempt after the restart carries the customer link, which the stored record never holds', async () => {
    await start();
    const path = '/restart/quote-sent';
    const fixtures = new QuoteFixtures(app!);
    const org = await fixtures.organization({ settings: { webhookUrl: receiver.url(path) } });
    expect((await app!.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN })).status).toBe(201);
    const submissionId = await fixtures.submission(org);
    const quoteId = await fixtures.createQuote(org, submissionId);
    // Everything before the send has arrived, so the hang below answers the first attempt of quote.sent.
    await receiver.waitFor((r) => r.path === path && r.body?.event === 'submission.created' && r.body.data.submission.id === submissionId);
    await receiver.waitFor((r) => r.path === path && r.body?.event === 'quote.created' && r.body.data.quote.id === quoteId);
    receiver.respondWith(path, 'hang');
    await fixtures.send(org, quoteId);
    const link = `http://localhost:3000/q/${await fixtures.customerToken(quoteId)}`;
    const sentTo = (r: { path: string; body: any }) => r.path === path && r.body?.event === 'quote.sent' && r.body.data.quote.id === quoteId;
    const [first] = await receiver.waitFor(sentTo);
    const id = first.body.id;
    const { config } = app!;

    await stop(); // the hanging attempt times out and is recorded; the retry is left to the next start
    const store = await openReadStore(config);
    const stored = await store.get<DeliveryRecord>(DELIVERIES, id);
    await store.close();
    expect(stored).toMatchObject({ status: 'pending', attempts: 1 });
    expect(JSON.stringify(stored)).not.toContain('/q/');

    await start();
    const requests = await receiver.waitFor(sentTo, 2);
    expect(requests.map((r) => r.body.data.quote.customerUrl)).toEqual([link, link]);
    expect(requests.map((r) => r.headers['x-service-delivery'])).toEqual([id, id]);
    const record = await delivery(org.apiKey, id, (r) => r.status === 'delivered');
    expect(record.attempts).toBe(2);
    expect(JSON.stringify(record)).not.toContain('/q/');
  });

  it('given a delivered quote.sent stored with its link (as before the link was added per attempt), then the next start removes the link from the stored record', async () => {
    await start();
    const path = '/restart/legacy-link';
    const fixtures = new QuoteFixtures(app!);
    const org = await fixtures.organization({ settings: { webhookUrl: receiver.url(path) } });
    expect((await app!.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN })).status).toBe(201);
    const quoteId = await fixtures.createQuote(org, await fixtures.submission(org));
    await fixtures.send(org, quoteId);
    const [sent] = await receiver.waitFor((r) => r.path === path && r.body?.event === 'quote.sent' && r.body.data.quote.id === quoteId);
    const delivered = await delivery(org.apiKey, sent.body.id, (r) => r.status === 'delivered');
    const { config } = app!;
    await stop();

    // What a store written before the fix holds: the link in the delivered record, and no sweep yet.
    const link = sent.body.data.quote.customerUrl;
    let store = await openReadStore(config);
    const record = (await store.get<DeliveryRecord>(DELIVERIES, sent.body.id))!;
    const legacy = { ...record, payload: { ...record.payload, data: { ...record.payload.data, quote: { ...(record.payload.data as any).quote, customerUrl: link } } } };
    await store.upsert([{ collection: DELIVERIES, document: legacy }]);
    await store.saveCheckpoint(SWEEP_DONE, 0);
    expect(JSON.stringify(await store.get(DELIVERIES, sent.body.id))).toContain(link);
    await store.close();

    await start();
    store = await openReadStore(config);
    try {
      for (let waited = 0; (await store.getCheckpoint(SWEEP_DONE)) !== SWEEP_VERSION; waited += 20) {
        if (waited > 10_000) throw new Error('the sweep did not finish');
        await pause(20);
      }
      const swept = (await store.get<DeliveryRecord>(DELIVERIES, sent.body.id))!;
      expect(JSON.stringify(swept)).not.toContain('/q/');
      expect(swept.payload).toEqual(record.payload);
      expect(swept).toMatchObject({ status: 'delivered', attempts: delivered.attempts });
    } finally {
      await store.close();
    }
  });

  it('given the process died mid-attempt (record left processing), then the next start returns it to pending and delivers it', async () => {
    await start();
    const org = await organization('/restart/crashed');
    const leadId = await newLead(org.slug);
    const [first] = await receiver.waitFor((r) => r.path === '/restart/crashed' && r.body?.data?.lead?.id === leadId);
    const id = first.body.id;
    const delivered = await delivery(org.apiKey, id, (r) => r.status === 'delivered');
    const { config } = app!;
    await stop();

    // What a kill -9 during a (re)delivery attempt leaves behind: the record claimed, no outcome.
    const store = await openReadStore(config);
    const record = (await store.get<DeliveryRecord>(DELIVERIES, id))!;
    const crashed: DeliveryRecord = { ...record, status: 'processing', attempts: 0, generation: 2, leaseUntil: Date.now() + 3_600_000, _rev: record._rev + 1 };
    expect(await store.upsert([{ collection: DELIVERIES, document: crashed, guard: { field: '_rev', value: crashed._rev } }])).toBe(1);
    await store.close();

    await start();
    const after = await delivery(org.apiKey, id, (r) => r.status === 'delivered' && r.attempts === 1);
    expect(after.deliveredAt).toBe(delivered.deliveredAt);
    const requests = await receiver.waitFor((r) => r.path === '/restart/crashed', 2);
    expect(requests.map((r) => r.headers['x-service-delivery'])).toEqual([id, id]);
  });

  it('given the outbox starts again on the same log, then no delivery is created or sent twice', async () => {
    await start();
    const org = await organization('/restart/again');
    const leadId = await newLead(org.slug);
    await receiver.waitFor((r) => r.path === '/restart/again' && r.body?.data?.lead?.id === leadId);
    await stop();
    await start();
    await newLead(org.slug);
    await receiver.waitFor((r) => r.path === '/restart/again', 2);
    await pause(200);
    const list = await app!.request('GET', '/api/v1/events', { token: org.apiKey });
    expect(list.body.data).toHaveLength(2);
    expect(receiver.requests('/restart/again')).toHaveLength(2);
  });
});
