import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { atGeneration, checkpointName, rebuildProjections } from '@lib/event-sourcing';
import { EventStore } from '@lib/event-store';
import { MessageBus } from '@lib/message-bus';
import { createLogger, flushRequestLines } from '@lib/observability';
import { ReadStore } from '@lib/read-store';
import { ProjectionRegistry, RELAY_CHECKPOINT } from '@lib/runtime';
import { loadConfig } from '@lib/shared';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import { WebhookReceiver } from '@lib/webhooks/testing/webhook-receiver';
import { createGatewayApp } from '../apps/api-gateway/src/create-gateway';
import { QuoteFixtures } from './quotes-fixtures';
import { ADMIN_TOKEN, openReadStore, TestApp } from './support/test-app';

/** Every JSON line the product logs while a test runs. */
class CapturedLogs extends Writable {
  readonly text: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text.push(chunk.toString());
    done();
  }
  get lines(): Array<Record<string, any>> {
    return this.all.split('\n').filter(Boolean).map((line) => JSON.parse(line));
  }
  get all(): string {
    flushRequestLines();
    return this.text.join('');
  }
}

async function waitFor<T>(read: () => Promise<T>, until: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (until(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('observability over HTTP', () => {
  const logs = new CapturedLogs();
  let app: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    app = await TestApp.start({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, undefined, createLogger({ level: 'info', name: 'test', destination: logs }));
  });
  afterAll(async () => {
    await app.close();
    await receiver.close();
  });

  it('/healthz answers 200 while the process runs, without credentials', async () => {
    const res = await app.request('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('/readyz reports each dependency and answers 200 when all are fine', async () => {
    const res = await app.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ready',
      checks: { eventStore: { ok: true }, readStore: { ok: true }, projections: { ok: true }, readStoreMatchesLog: { ok: true }, messageBus: { ok: true } },
    });
  });

  it('echoes an acceptable X-Request-Id, replaces an unacceptable one, and logs the request under that id', async () => {
    const given = await app.request('GET', '/api/v1/quotes', { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(given.status).toBe(401);
    expect(given.headers['x-request-id']).toBe('trace-abc.123');

    const generated = await app.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

    const line = logs.lines.find((l) => l.requestId === 'trace-abc.123');
    expect(line).toMatchObject({ level: 'info', msg: 'request completed', req: { method: 'GET', url: '/api/v1/quotes' }, res: { statusCode: 401 } });
    expect(typeof line!.durationMs).toBe('number');
  });

  it('counts requests by route template and exposes the product metrics in Prometheus format', async () => {
    const org = await app.createOrganization({ settings: { webhookUrl: receiver.url('/metrics-hook') } });
    expect((await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN })).status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await app.request('GET', '/api/v1/quotes?limit=5', { token: org.apiKey })).status).toBe(200);
    expect((await app.request('GET', '/api/v1/quotes/quo_doesnotexist', { token: org.apiKey })).status).toBe(404);
    // Sent with a key: the gateway's idempotency file is made by its first keyed POST.
    const lead = await app.request('POST', `/storefront/v1/${org.slug}/leads`, { body: { name: 'Jane', email: 'jane@example.com', message: 'Hello' }, headers: { 'idempotency-key': 'metrics-lead' } });
    expect(lead.status).toBe(201);
    await receiver.waitFor((r) => r.path === '/metrics-hook');

    const scrape = async () => (await app.request('GET', '/metrics')).body as string;
    const text = await waitFor(scrape, (t) => /webhook_delivery_outcomes_total\{target="webhook",outcome="delivered"\} 1/.test(t));
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/quotes",status="200"\} 3/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/quotes\/:quoteId",status="404"\} 1/);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v1\/quotes"\}/);
    expect(text).toMatch(/projection_lag_events\{projection="quotes"\} \d+/);
    expect(text).toMatch(/outbox_deliveries\{status="pending"\} \d+/);
    expect(text).toMatch(/outbox_deliveries\{status="processing"\} \d+/);
    expect(text).toMatch(/^outbox_relay_lag_events \d+$/m);
    for (const kind of ['mail', 'pdf']) for (const status of ['pending', 'working', 'failed']) expect(text).toMatch(new RegExp(`outbox_jobs\\{kind="${kind}",status="${status}"\\} \\d+`));
    expect(text).toContain('# TYPE pricing_loop_latency_seconds histogram');
    // The files of the stores that are embedded in this run, with a size.
    const embedded = [
      ...(process.env.EVENTSTORE_URL ? [] : ['events.db']),
      ...(process.env.MONGODB_URL ? [] : ['read-models.db', 'idempotency.db']),
      ...(process.env.KAFKA_BROKERS ? [] : ['bus.db']),
    ];
    for (const file of embedded) expect(text).toMatch(new RegExp(`embedded_store_bytes\\{file="${file.replace('.', '\\.')}"\\} [1-9]\\d*`));
    if (process.env.KAFKA_BROKERS) expect(text).not.toContain('embedded_store_bytes{file="bus.db"}');
    expect(text).toContain('process_cpu_seconds_total');
    // Labels hold templates, never ids or credentials.
    expect(text).not.toContain('quo_doesnotexist');
    expect(text).not.toContain(org.apiKey);
  });

  it('measures the live pricing loop, from the configuration change to the partner and from the partner to the customer', async () => {
    const org = await app.createOrganization({ settings: { webhookUrl: receiver.url('/pricing'), externalPricingEnabled: true } });
    await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
    const template = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/templates`, { token: ADMIN_TOKEN, body: exampleTemplateBody() });
    expect(template.status).toBe(201);
    const started = await app.request('POST', `/storefront/v1/${org.slug}/sessions`, { body: { templateId: template.body.id } });
    const { sessionId, customerToken } = started.body;

    // The customer watches the session over a real socket (SSE), the token in the query as EventSource sends it.
    await app.app.listen(0, '127.0.0.1');
    const address = await app.app.getUrl();
    const stream = await fetch(`${address}/storefront/v1/sessions/${sessionId}/stream?token=${customerToken}`);
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let seen = '';
    const readUntil = async (text: string) => {
      while (!seen.includes(text)) seen += new TextDecoder().decode((await reader.read()).value);
    };
    await readUntil('event: session');

    const configured = await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() });
    expect(configured.status).toBe(200);
    const [pricing] = await receiver.waitFor((r) => r.path === '/pricing' && r.body?.event === 'pricing.calculated');
    const callback = new URL(pricing.body.data.callback.url);
    const lineItems = configured.body.basePricing.lineItems.map((item: { unitPrice: number }) => ({ ...item, unitPrice: item.unitPrice + 10 }));
    // The partner answers 300 ms after it acknowledged the event: the wait the customer sees, which the delivery alone does not show.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const put = await app.request('PUT', callback.pathname, { body: { configHash: configured.body.configHash, lineItems } });
    expect(put.status).toBe(200);
    // A second answer for the same configuration is no new wait.
    expect((await app.request('PUT', callback.pathname, { body: { configHash: configured.body.configHash, lineItems } })).status).toBe(200);
    await readUntil('"source":"external"');
    await reader.cancel();

    const text = await waitFor(
      async () => (await app.request('GET', '/metrics')).body as string,
      (t) => /pricing_loop_latency_seconds_count\{stage="calculated_delivered"\} 1/.test(t) && /pricing_loop_latency_seconds_count\{stage="adjustment_pushed"\} \d/.test(t),
    );
    expect(text).toMatch(/pricing_loop_latency_seconds_count\{stage="adjustment_received"\} 1\n/);
    expect(Number(/pricing_loop_latency_seconds_sum\{stage="adjustment_received"\} ([\d.]+)/.exec(text)?.[1])).toBeGreaterThanOrEqual(0.3);
    expect(text).toMatch(/webhook_delivery_outcomes_total\{target="pricing",outcome="delivered"\} 1/);
    // Neither the customer token nor the capability token reached a log line.
    const capabilityToken = callback.pathname.split('/')[4];
    expect(capabilityToken.length).toBeGreaterThan(20);
    expect(logs.all).not.toContain(customerToken);
    expect(logs.all).not.toContain(capabilityToken);
    const streamLine = `/storefront/v1/sessions/${sessionId}/stream?token=[redacted]`;
    await waitFor(async () => logs.lines.filter((l) => l.msg === 'request completed').map((l) => l.req.url), (urls) => urls.includes(streamLine));
    // The stream is a request like any other in the metrics, counted when it ends, but not in the durations.
    const counted = await waitFor(
      async () => (await app.request('GET', '/metrics')).body as string,
      (t) => /http_requests_total\{method="GET",route="\/storefront\/v1\/sessions\/:sessionId\/stream",status="200"\} 1/.test(t),
    );
    expect(counted).not.toMatch(/http_request_duration_seconds_count\{method="GET",route="\/storefront\/v1\/sessions\/:sessionId\/stream"\}/);
  });

  it('never logs API keys, the admin token, signing secrets or capability tokens', async () => {
    const org = await app.createOrganization();
    const secret = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
    expect(secret.body.secret).toMatch(/^whsec_/);
    await app.request('GET', '/api/v1/quotes', { token: org.apiKey });
    await app.request('GET', '/api/v1/quotes', { token: 'qk_live_notavalidkeybutstillasecret0123456789' });
    await app.request('GET', '/api/v1/configuration-sessions/capabilitySECRETtoken1/adjustments');
    await app.request('GET', '/storefront/v1/quotes/quoteSECRETtoken2');
    await app.request('GET', '/q/quoteSECRETtoken3');
    await app.request('GET', '/storefront/v1/sessions/ses_1/stream?token=cst_SECRETcustomer4');
    await app.request('GET', '/api/v1/quotes', { headers: { cookie: 'session=cookieSECRET5' } });
    // A secret sent as the request id is not adopted: the line and the answer carry a new id.
    for (const sentAsId of [org.apiKey, secret.body.secret]) {
      const res = await app.request('GET', '/api/v1/organization', { token: org.apiKey, headers: { 'x-request-id': sentAsId } });
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(logs.lines.find((l) => l.requestId === res.headers['x-request-id'])).toMatchObject({ req: { url: '/api/v1/organization' } });
    }

    const all = logs.all;
    for (const leaked of [org.apiKey, ADMIN_TOKEN, secret.body.secret, 'qk_live_notavalid', 'SECRETtoken1', 'SECRETtoken2', 'SECRETtoken3', 'SECRETcustomer4', 'cookieSECRET5']) {
      expect(all).not.toContain(leaked);
    }
    const urls = logs.lines.filter((l) => l.msg === 'request completed').map((l) => l.req.url);
    expect(urls).toEqual(
      expect.arrayContaining([
        '/api/v1/configuration-sessions/[redacted]/adjustments',
        '/storefront/v1/quotes/[redacted]',
        '/q/[redacted]',
        '/storefront/v1/sessions/ses_1/stream?token=[redacted]',
      ]),
    );
  });

  it('never logs a working quote token, also on paths no route matches', async () => {
    const f = new QuoteFixtures(app);
    const org = await f.organization();
    const quoteId = await f.createQuote(org, await f.submission(org));
    await f.send(org, quoteId);
    const quoteToken = await f.customerToken(quoteId);
    expect((await app.request('GET', `/storefront/v1/quotes/${quoteToken}`)).status).toBe(200);
    const unmatched = await app.request('GET', `/storefront//v1/quotes/${quoteToken}`);
    expect(unmatched.status).toBe(404);

    expect(logs.all).not.toContain(quoteToken);
    expect(logs.lines.find((l) => l.requestId === unmatched.headers['x-request-id'])).toMatchObject({ req: { url: '/storefront//v1/quotes/[redacted]' }, res: { statusCode: 404 } });
  });

  it('logs and counts the requests Fastify answers before its hooks (a path it cannot decode, a parameter too long to route)', async () => {
    const scrape = async () => (await app.request('GET', '/metrics')).body as string;
    const unmatched = (text: string) => Number(/http_requests_total\{method="GET",route="unmatched",status="404"\} (\d+)/.exec(text)?.[1] ?? 0);
    const before = unmatched(await scrape());
    for (const [id, path] of [['bad-escape-1', '/api/v1/quotes/%E0%A4%A'], ['long-param-1', `/api/v1/quotes/${'a'.repeat(2_100)}`]]) {
      const res = await app.request('GET', path, { headers: { 'x-request-id': id } });
      expect([res.status, res.body.error.code, res.headers['x-request-id']]).toEqual([404, 'not_found', id]);
      const line = await waitFor(async () => logs.lines.find((l) => l.requestId === id), (found) => found !== undefined);
      expect(line).toMatchObject({ msg: 'request completed', req: { method: 'GET' }, res: { statusCode: 404 } });
    }
    expect(unmatched(await waitFor(scrape, (text) => unmatched(text) >= before + 2))).toBe(before + 2);
  });

  it('keeps every line JSON with a level and time', async () => {
    expect(logs.lines.length).toBeGreaterThan(10);
    for (const line of logs.lines) {
      expect(typeof line.level).toBe('string');
      expect(Date.parse(line.time)).not.toBeNaN();
    }
  });
});

describe('operations endpoints and rate limits', () => {
  it('never limits /healthz, /readyz and /metrics, and logs a refused request under its id', async () => {
    const logs = new CapturedLogs();
    const app = await TestApp.start({ RATE_LIMIT_IP_PER_MIN: '2' }, undefined, createLogger({ level: 'info', name: 'test', destination: logs }));
    try {
      for (let i = 0; i < 4; i++) {
        for (const path of ['/healthz', '/readyz', '/metrics']) expect((await app.request('GET', path)).status).toBe(200);
      }
      const limited = [];
      for (let i = 0; i < 3; i++) limited.push(await app.request('GET', '/storefront/v1/nosuchorg'));
      const refused = limited.find((r) => r.status === 429)!;
      expect(refused).toBeDefined();
      expect(logs.lines.find((l) => l.requestId === refused.headers['x-request-id'])).toMatchObject({ res: { statusCode: 429 } });
    } finally {
      await app.close();
    }
  });
});

/** A gateway on a fresh DATA_DIR that allows a projection lag of 2 events, closed and removed after `use`. */
async function withLagLimitedGateway(withWorkers: boolean, use: (gateway: NestFastifyApplication) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'readyz-'));
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN, SEED_DEMO: 'false', READY_MAX_PROJECTION_LAG: '2', LOG_LEVEL: 'silent' });
  let gateway: NestFastifyApplication | null = null;
  try {
    gateway = await createGatewayApp(config, { withWorkers });
    await use(gateway);
  } finally {
    await gateway?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('/readyz when the process cannot do its work', () => {
  it('answers 503 naming the projections that lag behind (no projector is running)', async () => {
    await withLagLimitedGateway(false, async (gateway) => {
      const ready = await gateway.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(200);

      await gateway.get(EventStore).appendToStream('lead-x', [1, 2, 3].map((n) => ({ type: 'test.v1.happened', data: { n } })), 'no_stream');
      const res = await gateway.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      const body = res.json();
      expect(body.status).toBe('not_ready');
      expect(body.checks.eventStore).toEqual({ ok: true });
      expect(body.checks.projections.ok).toBe(false);
      expect(body.checks.projections.problem).toMatch(/more than 2 events behind: .*quotes \(3 events\)/);
    });
  });

  it('answers 503 naming the checkpoints past the head of the log (a read store restored from a later moment than the events)', async () => {
    await withLagLimitedGateway(false, async (gateway) => {
      const events = gateway.get(EventStore);
      const reads = gateway.get(ReadStore);
      const { position } = await events.appendToStream('lead-x', [{ type: 'test.v1.happened', data: {} }], 'no_stream');
      const quotes = gateway.get(ProjectionRegistry).all().find((projection) => projection.name === 'quotes')!;
      await reads.saveCheckpoint(checkpointName(quotes), position);
      await reads.saveCheckpoint(RELAY_CHECKPOINT, position);
      expect((await gateway.inject({ method: 'GET', url: '/readyz' })).json().checks.readStoreMatchesLog).toEqual({ ok: true });

      await reads.saveCheckpoint(checkpointName(quotes), position + 5);
      await reads.saveCheckpoint(RELAY_CHECKPOINT, position + 7);
      const res = await gateway.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json().checks.readStoreMatchesLog).toEqual({
        ok: false,
        problem: expect.stringMatching(new RegExp(`ahead of the event log's head \\(${position}\\): .*projection:quotes:v\\d+ at ${position + 5}.*relay:domain-events at ${position + 7}`)),
      });
    });
  });

  it('says so at start-up when the read store is ahead of the log, and refuses writes until restarted, also once the log has grown past it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ahead-'));
    const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN, SEED_DEMO: 'false', LOG_LEVEL: 'silent' });
    try {
      const first = await createGatewayApp(config, { withWorkers: true });
      const created = await first.inject({ method: 'POST', url: '/admin/v1/organizations', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'Ahead', slug: 'ahead' } });
      expect(created.statusCode).toBe(201);
      const org = created.json();
      const quotes = first.get(ProjectionRegistry).all().find((projection) => projection.name === 'quotes')!;
      const head = await first.get(EventStore).headPosition();
      await first.close();
      // Written once the projector has stopped (it saves its own checkpoints as it stops).
      const reads = await openReadStore(config);
      await reads.saveCheckpoint(checkpointName(quotes), head + 2);
      await reads.close();
      const logs = new CapturedLogs();
      const second = await createGatewayApp(config, { withWorkers: false }, createLogger({ level: 'info', name: 'test', destination: logs }));
      try {
        expect(logs.lines.filter((line) => line.level === 'error').map((line) => line.msg)).toEqual([expect.stringMatching(/checkpoints ahead of the event log's head.*Writes are refused/)]);
        const lead = () => second.inject({ method: 'POST', url: '/storefront/v1/ahead/leads', payload: { name: 'Ada', email: 'ada@example.com', message: 'Hello' } });
        const refused = await lead();
        expect([refused.statusCode, refused.json().error]).toEqual([503, { code: 'unavailable', message: 'Nothing was written: this service refuses writes until an operator repairs its stores. Retry later.' }]);
        // The log grows past the checkpoint (another process writes): still refused, still not ready.
        await second.get(EventStore).appendToStream('lead-x', [1, 2, 3, 4].map((n) => ({ type: 'test.v1.happened', data: { n, organizationId: org.id } })), 'no_stream');
        expect((await lead()).statusCode).toBe(503);
        const ready = await second.inject({ method: 'GET', url: '/readyz' });
        expect([ready.statusCode, ready.json().checks.readStoreMatchesLog.ok]).toEqual([503, false]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('after a rebuild, follows the projections of the new generation', async () => {
    await withLagLimitedGateway(true, async (gateway) => {
      const events = gateway.get(EventStore);
      const reads = gateway.get(ReadStore);
      const projections = gateway.get(ProjectionRegistry).all();
      await rebuildProjections({ events, store: reads, projections, switchGraceMs: 0 });
      // Once the new generation's checkpoint moves, the projector runs it and the old generation's checkpoints stay where they are.
      const probe = await events.appendToStream('lead-w', [{ type: 'test.v1.happened', data: {} }], 'no_stream');
      await waitFor(() => reads.getCheckpoint(checkpointName(atGeneration(projections[0], 1))), (at) => at === probe.position);
      const { position } = await events.appendToStream('lead-x', [1, 2, 3].map((n) => ({ type: 'test.v1.happened', data: { n } })), 'no_stream');

      const ready = await waitFor(
        () => gateway.inject({ method: 'GET', url: '/readyz' }),
        (res) => res.statusCode === 200,
      );
      expect(ready.json().checks.projections).toEqual({ ok: true });
      const metrics = await gateway.inject({ method: 'GET', url: '/metrics' });
      expect(metrics.body).toMatch(/projection_lag_events\{projection="quotes"\} [0-2]\n/);
      expect(await events.headPosition()).toBe(position);
    });
  });

  // The message bus: an idle outbox has published nothing since, so only a probe can tell.
  it.each([
    { check: 'eventStore', closed: EventStore, other: 'readStore' },
    { check: 'messageBus', closed: MessageBus, other: 'eventStore' },
  ] as const)('answers 503 naming $check when it does not answer', async ({ check, closed, other }) => {
    const app = await TestApp.start();
    try {
      await app.get<EventStore | MessageBus>(closed).close();
      const res = await app.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body.checks[check].ok).toBe(false);
      expect(res.body.checks[other]).toEqual({ ok: true });
    } finally {
      await app.close().catch(() => undefined);
    }
  });
});
