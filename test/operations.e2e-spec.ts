import { engineOf, rebuildProjections, type ActiveProjectionReadStore } from '@lib/event-sourcing';
import { EventStore } from '@lib/event-store';
import { ReadStore } from '@lib/read-store';
import { allProjections } from '@lib/bootstrap';
import { ProjectionRegistry } from '@lib/runtime';
import { DELIVERIES } from '@lib/webhooks';
import { WebhookReceiver } from '@lib/webhooks/testing/webhook-receiver';
import { quoteLinkUrl } from '@lib/quotes/application/quote-links';
import { runCli } from '../apps/cli/src/testing/run-cli';
import { pause, QuoteFixtures, type Org } from './quotes-fixtures';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

/** Runs the CLI in this process against the app's stores (its DATA_DIR, or its database on the real engines). */
const cli = (app: TestApp, ...argv: string[]) =>
  runCli({ DATA_DIR: app.config.dataDir, MONGODB_URL: app.config.mongodbUrl, EVENTSTORE_URL: app.config.eventStoreUrl }, argv);

describe('operations: projection rebuilds and audits', () => {
  let app: TestApp;
  let receiver: WebhookReceiver;
  let f: QuoteFixtures;
  let org: Org;
  let quoteId: string;

  const request = (method: string, url: string, body?: unknown) => app.request(method, url, { token: org.apiKey, body });
  const quotesList = async () => (await request('GET', '/api/v1/quotes?limit=100')).body.data;
  const versions = async (id: string) => (await request('GET', `/api/v1/quotes/${id}/versions?limit=100`)).body.data;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    app = await TestApp.start({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE_MS: '0,50,100' });
    f = new QuoteFixtures(app);
    org = await f.organization({ settings: { webhookUrl: receiver.url('/ops'), quoteDefaults: { taxRate: 21, validityDays: 30 } } });
    expect((await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN })).status).toBe(201);
    // A quote with a history: created, line items replaced, sent, revised, sent again.
    quoteId = await f.createQuote(org, await f.submission(org));
    await request('PUT', `/api/v1/quotes/${quoteId}/line-items`, { lineItems: [{ description: 'Triple glazing', quantity: 2, unitPrice: 45.5, itemType: 'material' }], changeDescription: 'glazing' });
    await f.send(org, quoteId);
    await request('PATCH', `/api/v1/quotes/${quoteId}`, { taxRate: 9, revise: true });
    await f.send(org, quoteId);
    for (let i = 0; i < 3; i++) await f.createQuote(org, await f.submission(org));
  });

  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  /**
   * Waits until the outbox has relayed every event so far and no delivery is in flight any more,
   * so whatever arrives afterwards was caused by what the test does next.
   */
  async function settledWebhooks(): Promise<number> {
    const reads = app.get(ReadStore);
    const head = await app.get(EventStore).headPosition();
    let previous = -1;
    for (let waited = 0; waited < 15_000; waited += 100) {
      const relayed = (await reads.getCheckpoint('relay:domain-events')) ?? 0;
      const deliveries = await reads.count(DELIVERIES);
      const inFlight = await reads.count(DELIVERIES, { status: { in: ['pending', 'processing'] } });
      // The consumer creates deliveries a little after the relay: the count must also hold still.
      if (relayed >= head && deliveries > 0 && deliveries === previous && inFlight === 0) return receiver.requests('/ops').length;
      previous = deliveries;
      await pause(100);
    }
    throw new Error('the outbox did not settle');
  }

  it('rebuilds blue/green while the API keeps serving the complete old read model, then switches', async () => {
    const quotesBefore = await quotesList();
    const versionsBefore = await versions(quoteId);
    const store = app.get(ReadStore) as ActiveProjectionReadStore;
    let checkedDuringBuild = 0;
    const result = await rebuildProjections({
      events: app.get(EventStore),
      store,
      projections: app.get(ProjectionRegistry).all(),
      batchSize: 5,
      switchGraceMs: 600,
      onProgress: (progress) => {
        if (progress.phase === 'building' && progress.position > 0 && progress.position < progress.head) checkedDuringBuild++;
      },
    });
    expect(checkedDuringBuild).toBeGreaterThan(3);
    expect(result.projections.find((p) => p.name === 'quotes')).toEqual({ name: 'quotes', version: 3, from: 0, to: 1 });
    expect(result.dropped).toContain('quotes_v3');
    expect(await engineOf(store).listCollections()).toEqual(expect.arrayContaining(['quotes_v3_g1', 'quote_versions_v3_g1']));
    expect(await engineOf(store).listCollections()).not.toContain('quotes_v3');
    expect(await quotesList()).toEqual(quotesBefore);
    expect(await versions(quoteId)).toEqual(versionsBefore);
    // The projector followed the switch: a new write is read back from the new generation.
    const changed = await request('PATCH', `/api/v1/quotes/${quoteId}`, { externalRef: 'after-the-rebuild' });
    expect(changed.status).toBe(200);
    expect((await request('GET', `/api/v1/quotes/${quoteId}`)).body.externalRef).toBe('after-the-rebuild');
  });

  it('never serves a half-built generation: mid-rebuild reads still answer from the live one', async () => {
    const store = app.get(ReadStore) as ActiveProjectionReadStore;
    const before = await quotesList();
    const seenDuring: number[] = [];
    let reading: Promise<void> = Promise.resolve();
    await rebuildProjections({
      events: app.get(EventStore),
      store,
      projections: app.get(ProjectionRegistry).all().filter((p) => p.name === 'quotes'),
      batchSize: 3,
      switchGraceMs: 300,
      onProgress: (progress) => {
        if (progress.phase === 'building' && progress.position < progress.head) reading = reading.then(async () => void seenDuring.push((await quotesList()).length));
      },
    });
    await reading;
    expect(seenDuring.length).toBeGreaterThan(0);
    expect(new Set(seenDuring)).toEqual(new Set([before.length]));
    expect(await quotesList()).toEqual(before);
  });

  it('never answers a read with less than a write it confirmed, while rebuilds switch generations under writes', async () => {
    const store = app.get(ReadStore) as ActiveProjectionReadStore;
    // Not the quote whose history the audit tests below read.
    const quotes = (await quotesList()).map((quote: { id: string }) => quote.id).filter((id: string) => id !== quoteId).slice(0, 3);
    expect(quotes).toHaveLength(3);
    let rebuilding = true;
    const stale: string[] = [];
    let confirmed = 0;
    /** writes confirmed between a switch and the end of its rebuild (its grace period), when readers move to the new generation */
    let confirmedWhileSwitching = 0;
    const writer = async (id: string) => {
      for (let n = 0; rebuilding; n++) {
        const ref = `${id}-${n}`;
        const written = await request('PATCH', `/api/v1/quotes/${id}`, { externalRef: ref });
        if (written.status !== 200) continue;
        confirmed++;
        const read = (await request('GET', `/api/v1/quotes/${id}`)).body.externalRef;
        if (read !== ref) stale.push(`${ref} read as ${read}`);
        // Paced, so that the rebuild catches up with the log and switches.
        await pause(5);
      }
    };
    const writers = quotes.map(writer);
    try {
      // Three switches; one on the real engines, where a rebuild into FerretDB takes seconds.
      for (let i = 0; i < (app.config.mongodbUrl ? 1 : 3); i++) {
        let atSwitch: number | null = null;
        await rebuildProjections({
          events: app.get(EventStore),
          store,
          projections: app.get(ProjectionRegistry).all().filter((p) => p.name === 'quotes'),
          batchSize: 50,
          // FerretDB takes a tenth of a second and more per write: a longer grace period sees some.
          switchGraceMs: app.config.mongodbUrl ? 3_000 : 1_200,
          onProgress: (progress) => {
            if (progress.phase === 'switched') atSwitch ??= confirmed;
          },
        });
        expect(atSwitch).not.toBeNull();
        confirmedWhileSwitching += confirmed - atSwitch!;
      }
    } finally {
      rebuilding = false;
      await Promise.all(writers);
    }
    // The writes went on across every switch (how many depends on the machine: no count of them is asked for).
    expect(confirmedWhileSwitching).toBeGreaterThan(0);
    expect(stale).toEqual([]);
  }, 60_000);

  it('a rebuild sends no webhook and creates no delivery', async () => {
    const received = await settledWebhooks();
    expect(received).toBeGreaterThan(0);
    const deliveries = await app.get(ReadStore).count(DELIVERIES);
    const { code } = await cli(app, 'projections:rebuild', '--all', '--switch-grace-ms', '1500');
    expect(code).toBe(0);
    await pause(1_000);
    expect(receiver.requests('/ops')).toHaveLength(received);
    expect(await app.get(ReadStore).count(DELIVERIES)).toBe(deliveries);
  });

  it('projections:status lists every projection with version, live generation, checkpoint and lag', async () => {
    const { code, out } = await cli(app, 'projections:status', '--json');
    expect(code).toBe(0);
    const status = JSON.parse(out);
    expect(status.projections.map((p: any) => p.name).sort()).toEqual(app.get(ProjectionRegistry).all().map((p) => p.name).sort());
    const quotes = status.projections.find((p: any) => p.name === 'quotes');
    expect(quotes).toMatchObject({ version: 3, rebuild: null });
    expect(quotes.generation).toBeGreaterThanOrEqual(2);
    expect(quotes.lag).toBe(status.head - quotes.checkpoint);
  });

  it('projections:status shows a rebuild that stopped half-way, and the next run continues it', async () => {
    const live = JSON.parse((await cli(app, 'projections:status', '--json')).out).projections.find((p: any) => p.name === 'quotes');
    await expect(
      rebuildProjections({
        events: app.get(EventStore),
        store: app.get(ReadStore),
        projections: app.get(ProjectionRegistry).all().filter((p) => p.name === 'quotes'),
        batchSize: 5,
        onProgress: (progress) => {
          if (progress.position > 0) throw new Error('stopped half-way');
        },
      }),
    ).rejects.toThrow('stopped half-way');
    const stopped = JSON.parse((await cli(app, 'projections:status', '--json')).out).projections.find((p: any) => p.name === 'quotes');
    expect(stopped).toMatchObject({ generation: live.generation, checkpoint: live.checkpoint, rebuild: { generation: live.generation + 1, checkpoint: expect.any(Number) } });
    expect(stopped.rebuild.checkpoint).toBeGreaterThan(0);
    const resumed = await cli(app, 'projections:rebuild', 'quotes', '--switch-grace-ms', '1500');
    expect(resumed.out).toContain(`resumed from position ${stopped.rebuild.checkpoint}`);
    const after = JSON.parse((await cli(app, 'projections:status', '--json')).out).projections.find((p: any) => p.name === 'quotes');
    expect(after).toMatchObject({ generation: live.generation + 1, rebuild: null, lag: 0 });
  });

  it('the CLI knows exactly the projections the modules register', () => {
    expect(allProjections().map((p) => `${p.name}@${p.version}`).sort()).toEqual(app.get(ProjectionRegistry).all().map((p) => `${p.name}@${p.version}`).sort());
  });

  it('audit:quote prints every version with its trigger and totals, and agrees with the read model', async () => {
    const { code, out, err } = await cli(app, 'audit:quote', quoteId, '--json');
    expect(err).toContain('ok:');
    expect(code).toBe(0);
    const audit = JSON.parse(out);
    expect(audit.steps.map((s: any) => s.trigger)).toEqual(['create', 'line-item replace', 'send', 'revise', 'send', 'external reference change']);
    expect(audit.steps.map((s: any) => s.version)).toEqual([1, 1, 1, 2, 2, 2]);
    expect(audit.steps[1].lineItems).toHaveLength(1);
    expect(audit.steps[3].changedTerms).toEqual({ taxRate: 9 });
    expect(audit.steps[3].actor).toMatch(/^apiKey:/);
    expect(audit.steps[3].totals).toEqual({ subtotal: 91, taxAmount: 8.19, total: 99.19 });
    expect(audit.steps.map((s: any) => s.currency)).toEqual(Array(6).fill('EUR'));
    expect(audit.steps[2].details).toEqual({ recipients: [expect.stringContaining('@')], locale: expect.any(String) });
    const text = await cli(app, 'audit:quote', quoteId);
    expect(text.out).toContain('line-item replace');
    expect(text.out).toContain('Triple glazing — 2 × 45.5 = 91');
    // The currency of the totals, and to whom and in which language each send went.
    expect(text.out).toContain('subtotal 91, tax 8.19, total 99.19 EUR');
    expect(text.out).toMatch(/\n {4}recipients: \["[^"]+@[^"]+"\], locale: "[a-z]{2}/);
  });

  it('audit:quote exits 1 and names the difference when a stored version snapshot differs from the replay', async () => {
    const store = app.get(ReadStore);
    const [entry] = await versions(quoteId);
    const stored = (await store.find<any>('quote_versions_v3', { filter: { quoteId }, sort: [{ field: 'seq', direction: 'desc' }, { field: 'id', direction: 'desc' }], limit: 1 })).items[0];
    expect(stored.snapshot.total).toBe(entry.snapshot.total);
    await store.upsert([{ collection: 'quote_versions_v3', document: { ...stored, snapshot: { ...stored.snapshot, total: 1 } } }]);
    try {
      const { code, out } = await cli(app, 'audit:quote', quoteId);
      expect(code).toBe(1);
      expect(out).toContain('MISMATCH');
      // the third history entry (created, line items replaced, revised), the one GET /versions shows first
      expect(out).toContain('version 2 (entry 3).snapshot.total: replay 99.19, stored 1');
    } finally {
      await store.upsert([{ collection: 'quote_versions_v3', document: stored }]);
    }
    expect((await cli(app, 'audit:quote', quoteId)).code).toBe(0);
  });

  it('audit:quote exits 1 and names the link when the stored customer link differs from the replay or is missing', async () => {
    const store = app.get(ReadStore);
    const { tokenHash } = (await store.get<any>('quotes_v3', quoteId))!;
    const stored = (await store.get<any>('quote_links_v3', tokenHash))!;
    expect(stored.offer.total).toBe(99.19);
    try {
      await store.upsert([{ collection: 'quote_links_v3', document: { ...stored, offer: { ...stored.offer, total: 1 } } }]);
      const altered = await cli(app, 'audit:quote', quoteId);
      expect(altered.code).toBe(1);
      expect(altered.out).toContain(`link ${tokenHash}.offer.total: replay 99.19, stored 1`);
      await store.delete('quote_links_v3', tokenHash);
      const missing = await cli(app, 'audit:quote', quoteId);
      expect(missing.code).toBe(1);
      expect(missing.out).toContain(`link ${tokenHash}: replay has it, the store has nothing`);
    } finally {
      await store.upsert([{ collection: 'quote_links_v3', document: stored }]);
    }
    expect((await cli(app, 'audit:quote', quoteId)).code).toBe(0);
  });

  it('audit:quote exits 1 for an unknown quote; wrong usage exits 2', async () => {
    expect((await cli(app, 'audit:quote', 'quo_missing')).code).toBe(1);
    expect((await cli(app, 'audit:quote')).code).toBe(2);
    expect((await cli(app, 'projections:rebuild', 'nope')).code).toBe(2);
    expect((await cli(app, 'unknown:command')).code).toBe(2);
  });

  it('audit:export writes the organization\'s events as NDJSON with who caused them and when', async () => {
    const other = await f.organization();
    // A quote sent before links were derived: its stored quote.v1.sent carries the working customer link.
    const legacyQuoteId = await f.createQuote(org, await f.submission(org));
    await f.send(org, legacyQuoteId);
    const store = app.get(EventStore);
    const stream = await store.readStream(`quote-${legacyQuoteId}`);
    const sent = stream.filter((e) => e.type === 'quote.v1.sent').at(-1)!;
    const customerUrl = quoteLinkUrl(app.config, legacyQuoteId);
    await store.appendToStream(`quote-${legacyQuoteId}`, [{ type: 'quote.v1.sent', data: { ...(sent.data as object), customerUrl, resend: true }, metadata: sent.metadata }], stream.at(-1)!.revision);
    // the signing secrets as the events keep them: sealed (the clear secret is in no event)
    const secrets = (await store.readStream(`organization-${org.organizationId}`)).filter((e) => e.type === 'organization.v2.signingSecretRotated').map((e) => (e.data as { sealedSecret: string }).sealedSecret);
    expect(secrets.length).toBeGreaterThan(0);

    const { code, out } = await cli(app, 'audit:export', '--org', org.organizationId);
    expect(code).toBe(0);
    const events = out.trim().split('\n').map((line) => JSON.parse(line));
    expect(events.length).toBeGreaterThan(10);
    // no secret or capability token leaves the service, and the events that held them are still there
    expect(out).not.toContain('whsec_');
    for (const secret of secrets) expect(out).not.toContain(secret);
    expect(out).not.toContain(customerUrl.slice(customerUrl.lastIndexOf('/') + 1));
    expect(out).not.toContain(org.apiKey);
    expect(out).not.toMatch(/\b(cst|pct)_[0-9A-Za-z]/);
    const rotations = events.filter((e) => e.type === 'organization.v2.signingSecretRotated');
    expect(rotations).toHaveLength(secrets.length);
    expect(rotations.every((e) => e.data.sealedSecret === '[redacted]' && typeof e.data.secretId === 'string')).toBe(true);
    const legacySent = events.filter((e) => e.type === 'quote.v1.sent' && e.data.quoteId === legacyQuoteId);
    expect(legacySent.map((e) => e.data.customerUrl)).toEqual([null, `${app.config.publicBaseUrl}/q/[redacted]`]);
    expect(legacySent[1].data.tokenHash).toBe((sent.data as { tokenHash: string }).tokenHash);
    expect(events.every((e) => e.data.organizationId === org.organizationId)).toBe(true);
    expect(events.some((e) => e.data.organizationId === other.organizationId)).toBe(false);
    const revised = events.find((e) => e.type === 'quote.v1.revised');
    expect(revised.actor).toEqual({ type: 'api_key', id: expect.any(String) });
    expect(events.find((e) => e.type.startsWith('organization.'))?.actor).toEqual({ type: 'admin' });
    expect(events.find((e) => e.type.startsWith('session.'))?.actor).toEqual({ type: 'customer', id: expect.any(String) });
    expect(Date.parse(revised.recordedAt)).toBeGreaterThan(0);
    const positions = events.map((e) => e.position);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    const future = await cli(app, 'audit:export', '--org', org.organizationId, '--from', new Date(Date.now() + 60_000).toISOString());
    expect([future.code, future.out]).toEqual([0, '']);
    // a mistyped organization is told as such, not exported as one without events
    const unknown = await cli(app, 'audit:export', '--org', `${org.organizationId}x`);
    expect([unknown.code, unknown.out, unknown.err]).toEqual([1, '', `unknown organization ${org.organizationId}x: the event log has no such organization\n`]);
  });
});
