import { join } from 'node:path';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventStore } from '@lib/event-store';
import { PricingCallbackFinalizer } from '@lib/pricing-loop';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Live pricing waits only when there is someone to ask; this one never answers (prices come from the tests). */
const PARTNER_URL = 'https://partner.example.com/pricing';

interface ServerSentEvent {
  event: string;
  data: any;
}

/** Reads a text/event-stream over a real socket, as a browser's EventSource would. */
class EventStreamClient {
  readonly events: ServerSentEvent[] = [];
  readonly comments: string[] = [];
  response!: IncomingMessage;
  body = '';
  ended = false;
  private request!: ClientRequest;
  private buffer = '';

  static async open(base: string, path: string, headers: Record<string, string> = {}): Promise<EventStreamClient> {
    const client = new EventStreamClient();
    await new Promise<void>((resolve, reject) => {
      client.request = httpRequest(`${base}${path}`, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
        client.response = response;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => client.receive(chunk));
        response.on('end', () => (client.ended = true));
        response.on('error', () => (client.ended = true));
        resolve();
      });
      client.request.on('error', reject);
      client.request.end();
    });
    return client;
  }

  private receive(chunk: string): void {
    this.body += chunk;
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const lines = block.split('\n');
      for (const line of lines.filter((l) => l.startsWith(':'))) this.comments.push(line.slice(1).trim());
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      if (event) this.events.push({ event, data: JSON.parse(data) });
    }
  }

  async next(match: (event: ServerSentEvent) => boolean, timeoutMs = 5_000): Promise<ServerSentEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching server-sent event in time; got ${JSON.stringify(this.events.map((e) => e.data.pricing ?? e.data.status))}`);
      await pause(10);
    }
  }

  close(): void {
    this.request.destroy();
  }
}

async function listening(app: TestApp): Promise<string> {
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.app.getHttpServer().address() as AddressInfo).port}`;
}

async function storefront(app: TestApp, settings: Record<string, unknown>) {
  const org = await app.createOrganization({ settings });
  const template = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/templates`, { token: ADMIN_TOKEN, body: exampleTemplateBody() });
  return { ...org, templateId: template.body.id as string };
}

async function startSession(app: TestApp, org: { slug: string; templateId: string }) {
  const started = await app.request('POST', `/storefront/v1/${org.slug}/sessions`, { body: { templateId: org.templateId } });
  return started.body as { sessionId: string; customerToken: string };
}

describe('GET /storefront/v1/sessions/{sessionId}/stream', () => {
  let app: TestApp;
  let base: string;
  let org: Awaited<ReturnType<typeof storefront>>;
  const clients: EventStreamClient[] = [];
  const open = async (path: string, headers?: Record<string, string>) => {
    const client = await EventStreamClient.open(base, path, headers);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    app = await TestApp.start();
    base = await listening(app);
    org = await storefront(app, { externalPricingEnabled: true, pricingWebhookUrl: PARTNER_URL, pricingTimeoutMs: 60_000 });
  });
  afterEach(() => clients.splice(0).forEach((c) => c.close()));
  afterAll(() => app.close());

  it('needs the customer token of the session (header or ?token=)', async () => {
    const { sessionId } = await startSession(app, org);
    const other = await startSession(app, org);
    for (const client of [await open(`/storefront/v1/sessions/${sessionId}/stream`), await open(`/storefront/v1/sessions/${sessionId}/stream?token=${other.customerToken}`)]) {
      expect(client.response.statusCode).toBe(401);
      for (const deadline = Date.now() + 5_000; !client.ended && Date.now() < deadline; ) await pause(10);
      expect(JSON.parse(client.body).error.code).toBe('unauthorized');
    }
    expect((await open(`/storefront/v1/sessions/ses_unknown/stream?token=${other.customerToken}`)).response.statusCode).toBe(401);
    const twice = await open(`/storefront/v1/sessions/${sessionId}/stream?token=${other.customerToken}&token=${other.customerToken}`);
    expect(twice.response.statusCode).toBe(401);
    for (const deadline = Date.now() + 5_000; !twice.ended && Date.now() < deadline; ) await pause(10);
    expect(JSON.parse(twice.body).error.message).toContain('more than once');
  });

  it('sends the session at once, then every change: configuration, an external price, submit', async () => {
    const { sessionId, customerToken } = await startSession(app, org);
    const stream = await open(`/storefront/v1/sessions/${sessionId}/stream?token=${customerToken}`);
    expect(stream.response.statusCode).toBe(200);
    expect(stream.response.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.response.headers['cache-control']).toBe('no-store, no-transform');
    const first = await stream.next(() => true);
    expect(first).toEqual({ event: 'session', data: (await app.request('GET', `/storefront/v1/sessions/${sessionId}`, { token: customerToken })).body });

    const configured = (await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() })).body;
    const priced = await stream.next((e) => e.data.configHash === configured.configHash);
    expect(priced.data.pricing).toMatchObject({ source: 'base', awaitingExternal: true });

    const token = await capabilityToken(app, org.organizationId, configured);
    const put = await app.request('PUT', `/api/v1/configuration-sessions/${token}/adjustments`, {
      body: { configHash: configured.configHash, lineItems: [{ description: 'Window, all in', quantity: 1, unitPrice: 777 }] },
    });
    expect(put.status).toBe(200);
    const external = await stream.next((e) => e.data.pricing.source === 'external');
    expect(external.data.pricing).toEqual({ source: 'external', awaitingExternal: false, subtotal: 777, lineItems: [expect.objectContaining({ description: 'Window, all in', total: 777 })] });

    await app.request('POST', `/storefront/v1/sessions/${sessionId}/submit`, { token: customerToken, body: { customer: { name: 'Ada', email: 'ada@example.com' } } });
    await stream.next((e) => e.data.status === 'submitted');
    // One event per change: nothing was sent twice.
    const seen = stream.events.map((e) => JSON.stringify(e.data));
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('answers a HEAD at once with the headers of the stream, and no stream', async () => {
    const { sessionId, customerToken } = await startSession(app, org);
    const head = await fetch(`${base}/storefront/v1/sessions/${sessionId}/stream?token=${customerToken}`, { method: 'HEAD', signal: AbortSignal.timeout(5_000) });
    expect([head.status, head.headers.get('content-type'), head.headers.get('cache-control'), head.headers.get('content-length')]).toEqual([200, 'text/event-stream; charset=utf-8', 'no-store, no-transform', null]);
    expect((await fetch(`${base}/storefront/v1/sessions/${sessionId}/stream`, { method: 'HEAD', signal: AbortSignal.timeout(5_000) })).status).toBe(401);
  });

  it('accepts the token in the Authorization header too', async () => {
    const { sessionId, customerToken } = await startSession(app, org);
    const stream = await open(`/storefront/v1/sessions/${sessionId}/stream`, { authorization: `Bearer ${customerToken}` });
    expect(stream.response.statusCode).toBe(200);
    await stream.next((e) => e.data.sessionId === sessionId);
  });

  it('pushes a change that another process appended to the event store', async () => {
    const { sessionId, customerToken } = await startSession(app, org);
    const configured = (await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() })).body;
    const stream = await open(`/storefront/v1/sessions/${sessionId}/stream?token=${customerToken}`);
    await stream.next(() => true);

    // A second copy of the store module has its own in-process wake-up signal: like another
    // process, its append is found only by the live subscription's polling of the shared file.
    let other!: EventStore;
    jest.isolateModules(() => {
      const { SqliteEventStore } = require('@lib/event-store');
      other = new SqliteEventStore({ file: join(app.config.dataDir, 'events.db') });
    });
    try {
      // 'stream_exists': the outbox may be appending to the session too (the pricing request's token).
      await other.appendToStream(
        `session-${sessionId}`,
        [{ type: 'session.v1.adjustmentReceived', data: { organizationId: org.organizationId, sessionId, configHash: configured.configHash, lineItems: [{ description: 'From elsewhere', quantity: 1, unitPrice: 5, total: 5, itemType: 'other' }], subtotal: 5, at: Date.now() } }],
        'stream_exists',
      );
    } finally {
      await other.close();
    }
    const pushed = await stream.next((e) => e.data.pricing.source === 'external');
    expect(pushed.data.pricing.lineItems[0].description).toBe('From elsewhere');
  });

  it('keeps at most 10 streams of one session open: 429 rate_limited beyond, room again once one closes', async () => {
    const { sessionId, customerToken } = await startSession(app, org);
    const path = `/storefront/v1/sessions/${sessionId}/stream?token=${customerToken}`;
    const streams: EventStreamClient[] = [];
    for (let i = 0; i < 10; i++) streams.push(await open(path));
    expect(streams.map((s) => s.response.statusCode)).toEqual(Array(10).fill(200));
    const refused = await open(path);
    expect(refused.response.statusCode).toBe(429);
    expect(refused.response.headers['retry-after']).toBe('15');
    for (let i = 0; i < 50 && !refused.ended; i++) await pause(10);
    expect(JSON.parse(refused.body).error.code).toBe('rate_limited');
    // Another session of the same customer is not affected.
    const other = await startSession(app, org);
    expect((await open(`/storefront/v1/sessions/${other.sessionId}/stream?token=${other.customerToken}`)).response.statusCode).toBe(200);
    streams[0].close();
    let reopened: EventStreamClient | undefined;
    for (let i = 0; i < 50 && reopened?.response.statusCode !== 200; i++) {
      await pause(20);
      reopened = await open(path);
    }
    expect(reopened?.response.statusCode).toBe(200);
  });

  it('tells EventSource how soon to reconnect; a client that leaves breaks nothing', async () => {
    const { sessionId, customerToken } = await startSession(app, org);
    const stream = await open(`/storefront/v1/sessions/${sessionId}/stream?token=${customerToken}`);
    await stream.next(() => true);
    expect(stream.body.startsWith('retry: ')).toBe(true);
    stream.close();
    await pause(50);
    const res = await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() });
    expect(res.status).toBe(200);
  });
});

describe('the session stream over time', () => {
  let app: TestApp;
  let base: string;

  beforeAll(async () => {
    app = await TestApp.start({ SESSION_IDLE_TTL_MS: '2500' });
    base = await listening(app);
  });

  it('falls back to base pricing when the live-pricing wait is over, and reports expiry, with no write in between', async () => {
    const org = await storefront(app, { externalPricingEnabled: true, pricingWebhookUrl: PARTNER_URL, pricingTimeoutMs: 1_000 });
    const { sessionId, customerToken } = await startSession(app, org);
    await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() });
    const stream = await EventStreamClient.open(base, `/storefront/v1/sessions/${sessionId}/stream?token=${customerToken}`);
    try {
      expect((await stream.next(() => true)).data.pricing).toMatchObject({ source: 'base', awaitingExternal: true });
      const fallback = await stream.next((e) => e.data.pricing.awaitingExternal === false, 3_000);
      expect(fallback.data).toMatchObject({ status: 'active', pricing: { source: 'base' } });
      await stream.next((e) => e.data.status === 'expired', 4_000);
      // Nothing changes after expiry: the stream ends, and a new one is told there is nothing to follow.
      for (let i = 0; i < 100 && !stream.ended; i++) await pause(10);
      expect(stream.ended).toBe(true);
      const again = await EventStreamClient.open(base, `/storefront/v1/sessions/${sessionId}/stream?token=${customerToken}`);
      expect(again.response.statusCode).toBe(204);
      again.close();
    } finally {
      stream.close();
    }
  });

  it('closes open streams when the application shuts down', async () => {
    const org = await storefront(app, {});
    const { sessionId, customerToken } = await startSession(app, org);
    const stream = await EventStreamClient.open(base, `/storefront/v1/sessions/${sessionId}/stream?token=${customerToken}`);
    await stream.next(() => true);
    const started = Date.now();
    await app.close();
    expect(Date.now() - started).toBeLessThan(3_000);
    for (let i = 0; i < 50 && !stream.ended; i++) await pause(10);
    expect(stream.ended).toBe(true);
  });
});

/** A capability token for the session's current configuration, minted as the outbox does before a delivery attempt. */
async function capabilityToken(app: TestApp, organizationId: string, session: { sessionId: string; configHash: string }): Promise<string> {
  const finalized = await app.get(PricingCallbackFinalizer).finalize({
    id: `evt_stream_${session.sessionId}`,
    organizationId,
    generation: 1,
    payload: { data: { context: 'configuration', configHash: session.configHash, session: { id: session.sessionId } } },
  });
  return /configuration-sessions\/(pct_[^/]+)\/adjustments$/.exec((finalized.data as any).callback.url)![1];
}
