import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { EventStore } from '@lib/event-store';
import { IdempotencyStore } from '@lib/http';
import { submissionStream } from '@lib/submissions/domain/submission.events';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import { WebhookReceiver } from '@lib/webhooks/testing/webhook-receiver';
import { DocumentedShapes } from './support/documented-shapes';
import { BODIES_REFUSED } from './support/refused-bodies';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const PUBLIC_BASE_URL = 'http://localhost:3000';
const CALLBACK_URL = /^http:\/\/localhost:3000\/api\/v1\/configuration-sessions\/(pct_[A-Za-z0-9_-]{43})\/adjustments$/;

interface Delivery {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

/** A real webhook receiver on a local port: keeps every delivery and answers 200. */
class Receiver {
  readonly deliveries: Delivery[] = [];
  private server!: Server;

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        this.deliveries.push({ headers: request.headers, raw, body: JSON.parse(raw) });
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  async next(match: (delivery: Delivery) => boolean, timeoutMs = 5_000): Promise<Delivery> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.deliveries.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error('the receiver got no matching delivery in time');
      await pause(10);
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** decisions §9: `X-Service-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, one v1 per live secret. */
function signedWith(delivery: Delivery, secret: string): boolean {
  const parts = String(delivery.headers['x-service-signature']).split(',');
  const t = parts.find((p) => p.startsWith('t='))?.slice(2);
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${delivery.raw}`).digest('hex'));
  return parts.filter((p) => p.startsWith('v1=')).some((p) => {
    const actual = Buffer.from(p.slice(3));
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  });
}

const isPricingFor = (sessionId: string, context = 'configuration') => (d: Delivery) =>
  d.body.event === 'pricing.calculated' && d.body.data.session.id === sessionId && d.body.data.context === context;

/** The capability path of an event (the tests talk to the app directly, not through PUBLIC_BASE_URL). */
function capability(delivery: Delivery): { token: string; adjustments: string; read: string } {
  const [, token] = CALLBACK_URL.exec(delivery.body.data.callback.url)!;
  return { token, adjustments: `/api/v1/configuration-sessions/${token}/adjustments`, read: `/api/v1/configuration-sessions/${token}` };
}

const marked = (items: Array<{ unitPrice: number }>, factor: number) => items.map((item) => ({ ...item, unitPrice: Math.round(item.unitPrice * factor * 100) / 100 }));

async function liveOrganization(app: TestApp, receiver: Receiver, settings: Record<string, unknown> = {}) {
  const org = await app.createOrganization({ settings: { webhookUrl: receiver.url, externalPricingEnabled: true, ...settings } });
  const { body: signing } = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
  const template = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/templates`, { token: ADMIN_TOKEN, body: exampleTemplateBody() });
  expect(template.status).toBe(201);
  return { ...org, secret: signing.secret as string, templateId: template.body.id as string };
}

type Live = Awaited<ReturnType<typeof liveOrganization>>;

async function configuredSession(app: TestApp, live: Live, configuration: Record<string, unknown> = exampleConfigurationInput()) {
  const started = await app.request('POST', `/storefront/v1/${live.slug}/sessions`, { body: { templateId: live.templateId } });
  const { sessionId, customerToken } = started.body;
  const configured = await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: configuration });
  expect(configured.status).toBe(200);
  return { sessionId, customerToken, session: configured.body };
}

describe('live pricing', () => {
  let app: TestApp;
  let receiver: Receiver;
  let live: Live;

  const view = async (sessionId: string, customerToken: string) => (await app.request('GET', `/storefront/v1/sessions/${sessionId}`, { token: customerToken })).body;
  const setLivePricing = (organizationId: string, externalPricingEnabled: boolean) =>
    app.request('PATCH', `/admin/v1/organizations/${organizationId}`, { token: ADMIN_TOKEN, body: { settings: { externalPricingEnabled } } });

  beforeAll(async () => {
    receiver = await new Receiver().start();
    app = await TestApp.start({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', PRICING_RETRY_SCHEDULE_MS: '0,50,100', PUBLIC_BASE_URL });
    live = await liveOrganization(app, receiver, { pricingTimeoutMs: 30_000 });
  });
  afterAll(async () => {
    await app.close();
    await receiver.close();
  });

  describe('pricing.calculated on a configuration change', () => {
    it('carries the configuration, its base pricing and a callback; the answer is what the customer sees', async () => {
      const { sessionId, customerToken, session } = await configuredSession(app, live);
      expect(session.pricing).toMatchObject({ source: 'base', awaitingExternal: true });

      const delivery = await receiver.next(isPricingFor(sessionId));
      expect(delivery.headers['x-service-event']).toBe('pricing.calculated');
      expect(signedWith(delivery, live.secret)).toBe(true);
      expect(delivery.body.data).toEqual({
        context: 'configuration',
        configHash: session.configHash,
        basePricing: session.basePricing,
        configuration: session.configuration,
        template: { id: live.templateId },
        session: { id: sessionId },
        callback: { url: expect.stringMatching(CALLBACK_URL), timeoutMs: 30_000, generation: 1 },
      });
      expect(delivery.headers['x-service-delivery-generation']).toBe('1');

      // Base items sent back with a markup, `total` and all: extra fields are ignored, totals recomputed.
      const lineItems = marked(session.basePricing.lineItems, 1.1);
      const put = await app.request('PUT', capability(delivery).adjustments, { body: { configHash: session.configHash, lineItems } });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ applied: true, isCurrentConfiguration: true });

      const after = await view(sessionId, customerToken);
      expect(after.pricing.source).toBe('external');
      expect(after.pricing.awaitingExternal).toBe(false);
      expect(after.pricing.lineItems.map((i: any) => [i.description, i.unitPrice, i.itemKey])).toEqual(lineItems.map((i: any) => [i.description, i.unitPrice, i.itemKey]));
      for (const item of after.pricing.lineItems) expect(item.total).toBeCloseTo(item.quantity * item.unitPrice, 2);
      expect(after.pricing.subtotal).toBeCloseTo(after.pricing.lineItems.reduce((sum: number, i: any) => sum + i.total, 0), 2);
      expect(after.adjustments).toEqual({ configHash: session.configHash, lineItems: after.pricing.lineItems, subtotal: after.pricing.subtotal, receivedAt: expect.any(Number) });
    });

    it('lets the external system read the session through the same capability, without an Authorization header', async () => {
      const { sessionId, session } = await configuredSession(app, live);
      const read = await app.request('GET', capability(await receiver.next(isPricingFor(sessionId))).read);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ sessionId, organizationId: live.organizationId, status: 'active', configHash: session.configHash, adjustments: null, submissionId: null });
      expect(read.body.pricing).toBeUndefined();
    });

    it('is an idempotent full replace: the same write twice is harmless, the last write wins', async () => {
      const { sessionId, customerToken, session } = await configuredSession(app, live);
      const { adjustments } = capability(await receiver.next(isPricingFor(sessionId)));
      const first = { configHash: session.configHash, lineItems: [{ description: 'Window, all in', quantity: 1, unitPrice: 900 }] };
      expect((await app.request('PUT', adjustments, { body: first })).status).toBe(200);
      expect((await app.request('PUT', adjustments, { body: first })).status).toBe(200);
      expect((await view(sessionId, customerToken)).pricing).toMatchObject({ source: 'external', subtotal: 900 });
      const second = { configHash: session.configHash, lineItems: [{ description: 'Window', quantity: 2, unitPrice: 400.005, itemType: 'window' }, { description: 'Fitting', quantity: 1, unitPrice: 80, itemType: 'labor' }] };
      expect((await app.request('PUT', adjustments, { body: second })).status).toBe(200);
      expect((await view(sessionId, customerToken)).pricing).toEqual({
        source: 'external',
        awaitingExternal: false,
        subtotal: 880.01,
        lineItems: [
          { description: 'Window', quantity: 2, unitPrice: 400.005, total: 800.01, itemType: 'window' },
          { description: 'Fitting', quantity: 1, unitPrice: 80, total: 80, itemType: 'labor' },
        ],
      });
    });

    it('takes basePricing back as it is, subtotal and all, with amounts computed in floating point; the server rounds and sums', async () => {
      const { sessionId, customerToken, session } = await configuredSession(app, live);
      const { adjustments, read } = capability(await receiver.next(isPricingFor(sessionId)));
      const [window, screen] = session.basePricing.lineItems;
      // 551.88 × 1.1 = 607.0680000000001 and 0.1 + 0.2 = 0.30000000000000004 in JavaScript
      const lineItems = [{ ...window, quantity: 1, unitPrice: 551.88 * 1.1 }, { ...screen, quantity: 3, unitPrice: 0.1 + 0.2 }];
      const put = await app.request('PUT', adjustments, { body: { ...session.basePricing, configHash: session.configHash, lineItems } });
      expect([put.status, put.body]).toEqual([200, { applied: true, isCurrentConfiguration: true }]);

      const stored = (await app.request('GET', read)).body.adjustments;
      expect(stored.lineItems.map((i: any) => [i.quantity, i.unitPrice, i.total])).toEqual([[1, 607.068, 607.07], [3, 0.3, 0.9]]);
      expect(stored.subtotal).toBe(607.97);
      expect((await view(sessionId, customerToken)).pricing).toMatchObject({ source: 'external', subtotal: 607.97 });
    });

    it('is not sent while live pricing is off', async () => {
      const off = await liveOrganization(app, receiver);
      await setLivePricing(off.organizationId, false);
      const { sessionId } = await configuredSession(app, off);
      await pause(300);
      expect(receiver.deliveries.filter((d) => d.body.data?.session?.id === sessionId)).toEqual([]);
      expect((await app.request('GET', '/api/v1/events?type=pricing.calculated', { token: off.apiKey })).body.data).toEqual([]);
    });

    it('keeps the capability token out of the delivery log', async () => {
      const { sessionId } = await configuredSession(app, live);
      const delivery = await receiver.next(isPricingFor(sessionId));
      const { token } = capability(delivery);
      const id = delivery.headers['x-service-delivery'];
      const record = await app.request('GET', `/api/v1/events/${id}`, { token: live.apiKey });
      expect(record.status).toBe(200);
      expect(record.body.payload.data).toMatchObject({ context: 'configuration', session: { id: sessionId } });
      expect(JSON.stringify(record.body)).not.toContain(token);
      expect(JSON.stringify(record.body)).not.toContain('pct_');
      const list = await app.request('GET', '/api/v1/events?type=pricing.calculated', { token: live.apiKey });
      expect(JSON.stringify(list.body)).not.toContain('pct_');
    });

    /** Redelivery is refused while a delivery is in flight: waits until its first attempt is recorded as delivered. */
    async function untilDelivered(org: Live, id: string): Promise<void> {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await pause(10)) {
        if ((await app.request('GET', `/api/v1/events/${id}`, { token: org.apiKey })).body.status === 'delivered') return;
      }
      throw new Error(`delivery ${id} was not delivered within 10 s`);
    }

    it('mints a new token on redelivery; the previous one stops working', async () => {
      const { sessionId, session } = await configuredSession(app, live);
      const first = await receiver.next(isPricingFor(sessionId));
      const id = String(first.headers['x-service-delivery']);
      await untilDelivered(live, id);
      const redelivered = await app.request('POST', `/api/v1/events/${id}/redeliver`, { token: live.apiKey });
      expect(redelivered.status).toBe(200);
      const second = await receiver.next((d) => d !== first && d.headers['x-service-delivery'] === id);
      expect(capability(second).token).not.toBe(capability(first).token);

      const body = { configHash: session.configHash, lineItems: [{ description: 'All in', quantity: 1, unitPrice: 1 }] };
      const old = await app.request('PUT', capability(first).adjustments, { body });
      expect(old.status).toBe(401);
      expect(old.body.error.code).toBe('unauthorized');
      expect((await app.request('GET', capability(first).read)).status).toBe(401);
      expect((await app.request('PUT', capability(second).adjustments, { body })).status).toBe(200);
    });

    it('a redelivery supersedes the previous token as soon as it is asked for, even when no attempt of it can be made (no URL)', async () => {
      const org = await liveOrganization(app, receiver);
      const { sessionId, session } = await configuredSession(app, org);
      const first = await receiver.next(isPricingFor(sessionId));
      const id = String(first.headers['x-service-delivery']);
      await untilDelivered(org, id);
      expect((await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN, body: { settings: { webhookUrl: null } } })).status).toBe(200);
      expect((await app.request('POST', `/api/v1/events/${id}/redeliver`, { token: org.apiKey })).status).toBe(200);
      const body = { configHash: session.configHash, lineItems: [{ description: 'All in', quantity: 1, unitPrice: 1 }] };
      expect((await app.request('PUT', capability(first).adjustments, { body })).body.error?.code).toBe('unauthorized');
      expect((await app.request('GET', capability(first).read)).status).toBe(401);
    });

    it('tells a redelivery from a retry: the generation stays on a retry and goes up with a redelivery, whose new callback URL works', async () => {
      // A receiver that deduplicates on X-Service-Delivery alone would drop the redelivery and keep
      // a URL that answers 401 (review of 2026-11-26): the generation is what tells the two apart,
      // signed in the body and, for Standard Webhooks receivers, in webhook-id.
      const hooks = await WebhookReceiver.start();
      try {
        const org = await liveOrganization(app, receiver, { pricingWebhookUrl: hooks.url('/pricing'), pricingTimeoutMs: 1_000 });
        hooks.respondWith('/pricing', 500);
        const { sessionId, session } = await configuredSession(app, org);
        const asDelivery = (r: { headers: IncomingHttpHeaders; rawBody: string; body: any }): Delivery => ({ headers: r.headers, raw: r.rawBody, body: r.body });
        const [first, retry] = (await hooks.waitFor((r) => r.body?.data?.session?.id === sessionId, 2)).map(asDelivery);
        const id = String(first.headers['x-service-delivery']);
        for (const attempt of [first, retry]) {
          expect(signedWith(attempt, org.secret)).toBe(true);
          expect(attempt.headers['x-service-delivery']).toBe(id);
          expect(attempt.headers['x-service-delivery-generation']).toBe('1');
          expect(attempt.headers['webhook-id']).toBe(id);
          expect(attempt.body.data.callback).toEqual({ url: first.body.data.callback.url, timeoutMs: 1_000, generation: 1 });
        }
        await untilDelivered(org, id);
        expect((await app.request('GET', `/api/v1/events/${id}`, { token: org.apiKey })).body).toMatchObject({ status: 'delivered', attempts: 2, generation: 1 });

        expect((await app.request('POST', `/api/v1/events/${id}/redeliver`, { token: org.apiKey })).status).toBe(200);
        const [, , redelivery] = (await hooks.waitFor((r) => r.body?.data?.session?.id === sessionId, 3)).map(asDelivery);
        expect(signedWith(redelivery, org.secret)).toBe(true);
        expect(redelivery.headers['x-service-delivery']).toBe(id);
        expect(redelivery.body.id).toBe(id);
        expect(redelivery.headers['x-service-delivery-generation']).toBe('2');
        expect(redelivery.headers['webhook-id']).toBe(`${id}_g2`);
        expect(() => new Webhook(org.secret).verify(redelivery.raw, redelivery.headers as Record<string, string>)).not.toThrow();
        expect(redelivery.body.data.callback).toEqual({ url: expect.stringMatching(CALLBACK_URL), timeoutMs: 1_000, generation: 2 });
        expect(redelivery.body.data.callback.url).not.toBe(first.body.data.callback.url);

        const body = { configHash: session.configHash, lineItems: [{ description: 'Redelivered price', quantity: 1, unitPrice: 42 }] };
        expect((await app.request('PUT', capability(first).adjustments, { body })).status).toBe(401);
        const put = await app.request('PUT', capability(redelivery).adjustments, { body });
        expect([put.status, put.body]).toEqual([200, { applied: true, isCurrentConfiguration: true }]);
        expect((await app.request('GET', `/api/v1/events/${id}`, { token: org.apiKey })).body).toMatchObject({ generation: 2 });
      } finally {
        await hooks.close();
      }
    });

    it('keeps an older token working while its configuration is current again (a newer event does not revoke it)', async () => {
      const { sessionId, customerToken, session } = await configuredSession(app, live);
      const first = await receiver.next(isPricingFor(sessionId));
      const wider = await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: { ...exampleConfigurationInput(), width: 1300 } });
      await receiver.next((d) => isPricingFor(sessionId)(d) && d.body.data.configHash === wider.body.configHash);
      const back = await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() });
      expect(back.body.configHash).toBe(session.configHash);
      const third = await receiver.next((d) => isPricingFor(sessionId)(d) && d !== first && d.body.data.configHash === session.configHash);
      expect(capability(third).token).not.toBe(capability(first).token);

      const res = await app.request('PUT', capability(first).adjustments, { body: { configHash: session.configHash, lineItems: [{ description: 'Again', quantity: 1, unitPrice: 5 }] } });
      expect(res.status).toBe(200);
    });
  });

  describe('PUT adjustments: the checks of decisions §8, in order', () => {
    const valid = (configHash: string) => ({ configHash, lineItems: [{ description: 'Window', quantity: 1, unitPrice: 100 }] });

    async function answerable() {
      const { sessionId, customerToken, session } = await configuredSession(app, live);
      const delivery = await receiver.next(isPricingFor(sessionId));
      return { sessionId, customerToken, session, ...capability(delivery) };
    }

    it('401 unauthorized for a malformed, unknown or forged token, telling them apart in no way', async () => {
      const { token, session } = await answerable();
      const forged = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
      const unknown = `pct_${'x'.repeat(43)}`;
      const answers = [];
      for (const bad of ['nonsense', 'pct_short', unknown, forged]) {
        const res = await app.request('PUT', `/api/v1/configuration-sessions/${bad}/adjustments`, { body: valid(session.configHash) });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
        expect(JSON.stringify(res.body)).not.toContain(bad);
        answers.push(res.body);
        expect((await app.request('GET', `/api/v1/configuration-sessions/${bad}`)).status).toBe(401);
      }
      expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    });

    it('401 comes before anything else: an invalid body with a bad token is still 401', async () => {
      const res = await app.request('PUT', `/api/v1/configuration-sessions/pct_${'y'.repeat(43)}/adjustments`, { body: { lineItems: 'none' } });
      expect(res.status).toBe(401);
    });

    it('the token, plan and window come before the body is read: 401 and 403 for bodies that are malformed, not JSON, too large, not an object or too deep', async () => {
      const org = await liveOrganization(app, receiver);
      const { sessionId } = await configuredSession(app, org);
      const { adjustments } = capability(await receiver.next(isPricingFor(sessionId)));
      const unknown = `/api/v1/configuration-sessions/pct_${'z'.repeat(43)}/adjustments`;
      for (const [body, own] of BODIES_REFUSED) {
        expect([own, (await app.request('PUT', unknown, body)).body.error?.code]).toEqual([own, 'unauthorized']);
        expect([own, (await app.request('PUT', adjustments, body)).body.error?.code]).toEqual([own, own]);
      }
      await setLivePricing(org.organizationId, false);
      for (const [body, own] of BODIES_REFUSED) expect([own, (await app.request('PUT', adjustments, body)).body.error?.code]).toEqual([own, 'forbidden_plan']);
    });

    it('403 forbidden_plan once live pricing is off, before the body is looked at', async () => {
      const org = await liveOrganization(app, receiver);
      const { sessionId, session } = await configuredSession(app, org);
      const { adjustments, read } = capability(await receiver.next(isPricingFor(sessionId)));
      await setLivePricing(org.organizationId, false);
      for (const body of [valid(session.configHash), { lineItems: [{ quantity: -1 }] }]) {
        const res = await app.request('PUT', adjustments, { body });
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('forbidden_plan');
      }
      expect((await app.request('GET', read)).body.error.code).toBe('forbidden_plan');
      await setLivePricing(org.organizationId, true);
      expect((await app.request('PUT', adjustments, { body: valid(session.configHash) })).status).toBe(200);
    });

    it('422 validation_error with field paths; extra line-item fields are ignored, unknown top-level fields are not', async () => {
      const { adjustments, read, session } = await answerable();
      const item = { description: 'Window', quantity: 1, unitPrice: 100 };
      const cases: Array<[unknown, string[]]> = [
        [{ configHash: session.configHash, lineItems: [item, item, item, { ...item, quantity: 0 }] }, ['lineItems[3].quantity']],
        [{ configHash: session.configHash, lineItems: [{ ...item, unitPrice: -0.01 }, { ...item, quantity: -2 }] }, ['lineItems[0].unitPrice', 'lineItems[1].quantity']],
        [{ configHash: session.configHash, lineItems: [{ ...item, description: 'x'.repeat(2001) }, { ...item, description: '<b></b>' }, { quantity: 1, unitPrice: 1 }] }, ['lineItems[0].description', 'lineItems[1].description', 'lineItems[2].description']],
        [{ configHash: session.configHash, lineItems: [{ ...item, itemType: 'sofa' }] }, ['lineItems[0].itemType']],
        [{ configHash: session.configHash, lineItems: Array.from({ length: 201 }, () => item) }, ['lineItems']],
        [{ configHash: session.configHash, lineItems: [] }, ['lineItems']],
        [{ lineItems: [item] }, ['configHash']],
        [{ configHash: session.configHash, lineItems: [item], comment: 'hi' }, ['comment']],
        [{ configHash: session.configHash, lineItems: { 0: item } }, ['lineItems']],
        [{ configHash: session.configHash, lineItems: [null, 'x'] }, ['lineItems[0]', 'lineItems[1]']],
        [{ configHash: session.configHash, lineItems: [item, []] }, ['lineItems[1]']],
        [[], ['']],
      ];
      for (const [body, paths] of cases) {
        const res = await app.request('PUT', adjustments, { body });
        expect(res.status).toBe(422);
        expect(res.body.error.code).toBe('validation_error');
        expect([...new Set(res.body.error.details.fields.map((f: { path: string }) => f.path))].sort()).toEqual(paths);
      }
      const accepted = await app.request('PUT', adjustments, {
        body: { configHash: session.configHash, lineItems: [{ ...item, description: '<script>x()</script><b>Window</b> 1200 × 1400', total: 12345, order: 7, itemKey: 'component:c1:TT', sortOffset: 3, externalRef: 'erp:line:9' }] },
      });
      expect(accepted.status).toBe(200);
      const stored = await app.request('GET', read);
      expect(stored.body.adjustments.lineItems).toEqual([
        { description: 'Window 1200 × 1400', quantity: 1, unitPrice: 100, total: 100, itemType: 'other', itemKey: 'component:c1:TT', sortOffset: 3, externalRef: 'erp:line:9' },
      ]);
    });

    it('409 stale_config_hash with the current hash once the configuration changed; an invalid body is 422 first', async () => {
      const { adjustments, session, sessionId, customerToken } = await answerable();
      const changed = await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: { ...exampleConfigurationInput(), width: 1250 } });
      const stale = await app.request('PUT', adjustments, { body: valid(session.configHash) });
      expect(stale.status).toBe(409);
      expect(stale.body.error).toMatchObject({ code: 'stale_config_hash', details: { currentConfigHash: changed.body.configHash } });
      // The token is bound to the hash it was issued for, even when the body names the current one.
      const other = await app.request('PUT', adjustments, { body: valid(changed.body.configHash) });
      expect(other.status).toBe(409);
      expect((await app.request('PUT', adjustments, { body: { configHash: session.configHash, lineItems: [{ quantity: 0 }] } })).status).toBe(422);
      expect((await view(sessionId, customerToken)).pricing.source).toBe('base');
    });

    describe('with a short token window and idle time', () => {
      let short: TestApp;
      let shortReceiver: Receiver;
      let shortLive: Live;

      beforeAll(async () => {
        shortReceiver = await new Receiver().start();
        short = await TestApp.start({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', PRICING_TOKEN_WINDOW_MS: '1000', SESSION_IDLE_TTL_MS: '3000', PUBLIC_BASE_URL });
        shortLive = await liveOrganization(short, shortReceiver);
      });
      afterAll(async () => {
        await short.close();
        await shortReceiver.close();
      });

      it('403 window_expired after the window, before the body is looked at; 410 session_expired once the session idled out; reads go on', async () => {
        const { sessionId, session } = await configuredSession(short, shortLive);
        const { adjustments, read } = capability(await shortReceiver.next(isPricingFor(sessionId)));
        await pause(1_100);
        for (const body of [valid(session.configHash), { lineItems: [{ quantity: 0 }] }]) {
          const res = await short.request('PUT', adjustments, { body });
          expect(res.status).toBe(403);
          expect(res.body.error.code).toBe('window_expired');
        }
        for (const [body, own] of BODIES_REFUSED) expect([own, (await short.request('PUT', adjustments, body)).body.error?.code]).toEqual([own, 'window_expired']);
        // The window is a write window: the session still reads.
        const afterWindow = await short.request('GET', read);
        expect(afterWindow.status).toBe(200);
        expect(afterWindow.body).toMatchObject({ sessionId, status: 'active', configHash: session.configHash });
        await pause(2_000);
        const expired = await short.request('PUT', adjustments, { body: valid(session.configHash) });
        expect(expired.status).toBe(410);
        expect(expired.body.error.code).toBe('session_expired');
        // decisions §7: an expired session still answers a GET, with status `expired`.
        const expiredRead = await short.request('GET', read);
        expect(expiredRead.status).toBe(200);
        expect(expiredRead.body).toMatchObject({ sessionId, status: 'expired' });
      });

      it('an auto-fill answer is taken after the session idled out: it prices the submission, which never idles out', async () => {
        const { sessionId, customerToken, session } = await configuredSession(short, shortLive);
        const submitted = await short.request('POST', `/storefront/v1/sessions/${sessionId}/submit`, { token: customerToken, body: { customer: { name: 'Ada', email: 'ada@example.com' } } });
        await pause(3_100);
        expect((await short.request('POST', `/admin/v1/organizations/${shortLive.organizationId}/submissions/${submitted.body.submissionId}/autofill`, { token: ADMIN_TOKEN })).status).toBe(202);
        const { adjustments } = capability(await shortReceiver.next(isPricingFor(sessionId, 'autofill')));
        const put = await short.request('PUT', adjustments, { body: valid(session.configHash) });
        expect(put.status).toBe(200);
        const submission = await short.request('GET', `/api/v1/submissions/${submitted.body.submissionId}`, { token: shortLive.apiKey });
        expect(submission.body.externalPricing).toMatchObject({ configHash: session.configHash, subtotal: 100 });
      });
    });
  });

  describe('submit and auto-fill', () => {
    const answer = { lineItems: [{ description: 'Window, installed', quantity: 1, unitPrice: 1234.5, itemType: 'window', externalRef: 'erp:q:1' }, { description: 'Delivery', quantity: 1, unitPrice: 50 }] };
    const submit = (sessionId: string, customerToken: string) =>
      app.request('POST', `/storefront/v1/sessions/${sessionId}/submit`, { token: customerToken, body: { customer: { name: 'Ada Lovelace', email: 'ada@example.com' } } });

    it('sends pricing.calculated as the OpenAPI document describes it, in every context, with no field it leaves out', async () => {
      const documented = await DocumentedShapes.of(app);
      const { sessionId, customerToken } = await configuredSession(app, live);
      const configured = await receiver.next(isPricingFor(sessionId));
      const { submissionId } = (await submit(sessionId, customerToken)).body;
      const submitted = await receiver.next(isPricingFor(sessionId, 'submission'));
      expect((await app.request('POST', `/admin/v1/organizations/${live.organizationId}/submissions/${submissionId}/autofill`, { token: ADMIN_TOKEN })).status).toBe(202);
      const autofill = await receiver.next(isPricingFor(sessionId, 'autofill'));
      for (const delivery of [configured, submitted, autofill]) {
        expect({ context: delivery.body.data.context, errors: documented.dataErrors(delivery.body) }).toEqual({ context: delivery.body.data.context, errors: [] });
      }
    });

    it('a submit without a matching answer asks for a final price; the late answer is frozen onto the submission and a quote uses it', async () => {
      const { sessionId, customerToken, session } = await configuredSession(app, live);
      const { submissionId } = (await submit(sessionId, customerToken)).body;
      const final = await receiver.next(isPricingFor(sessionId, 'submission'));
      expect(final.body.data).toMatchObject({ context: 'submission', configHash: session.configHash, submission: { id: submissionId }, session: { id: sessionId } });
      expect(final.body.data.basePricing.subtotal).toBe(session.basePricing.subtotal);

      const put = await app.request('PUT', capability(final).adjustments, { body: { configHash: session.configHash, ...answer } });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ applied: true, isCurrentConfiguration: true });

      const submission = (await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: live.apiKey })).body;
      expect(submission.externalPricing).toEqual({
        configHash: session.configHash,
        subtotal: 1284.5,
        receivedAt: expect.any(Number),
        lineItems: [
          { description: 'Window, installed', quantity: 1, unitPrice: 1234.5, total: 1234.5, itemType: 'window', externalRef: 'erp:q:1' },
          { description: 'Delivery', quantity: 1, unitPrice: 50, total: 50, itemType: 'other' },
        ],
      });
      expect((await view(sessionId, customerToken)).pricing).toMatchObject({ source: 'external', subtotal: 1284.5 });

      const created = await app.request('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: live.apiKey, body: {} });
      expect(created.status).toBe(201);
      const quote = (await app.request('GET', `/api/v1/quotes/${created.body.quoteId}`, { token: live.apiKey })).body;
      expect(quote.lineItems.map((i: any) => [i.description, i.quantity, i.unitPrice, i.itemType])).toEqual([
        ['Window, installed', 1, 1234.5, 'window'],
        ['Delivery', 1, 50, 'other'],
      ]);
      expect(quote.subtotal).toBe(1284.5);
    });

    it('the configuration event answered after submit freezes too', async () => {
      const { sessionId, customerToken, session } = await configuredSession(app, live);
      const early = await receiver.next(isPricingFor(sessionId));
      const { submissionId } = (await submit(sessionId, customerToken)).body;
      expect((await app.request('PUT', capability(early).adjustments, { body: { configHash: session.configHash, ...answer } })).status).toBe(200);
      const submission = (await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: live.apiKey })).body;
      expect(submission.externalPricing).toMatchObject({ configHash: session.configHash, subtotal: 1284.5 });
    });

    it('a submit with an answer for the final configuration freezes it at once and asks for nothing more', async () => {
      const { sessionId, customerToken, session } = await configuredSession(app, live);
      const priced = await receiver.next(isPricingFor(sessionId));
      await app.request('PUT', capability(priced).adjustments, { body: { configHash: session.configHash, ...answer } });
      const { submissionId } = (await submit(sessionId, customerToken)).body;
      const submission = (await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: live.apiKey })).body;
      expect(submission.externalPricing).toMatchObject({ configHash: session.configHash, subtotal: 1284.5 });
      await pause(300);
      expect(receiver.deliveries.filter(isPricingFor(sessionId, 'submission'))).toEqual([]);
    });

    it('auto-fill asks for a price of a submission; the answer replaces its frozen pricing', async () => {
      const { sessionId, customerToken, session } = await configuredSession(app, live);
      const { submissionId } = (await submit(sessionId, customerToken)).body;
      const waitsMeasured = async () => Number(/pricing_loop_latency_seconds_count\{stage="adjustment_received"\} (\d+)/.exec((await app.request('GET', '/metrics')).body)?.[1] ?? 0);
      const measuredBefore = await waitsMeasured();
      const requested = await app.request('POST', `/admin/v1/organizations/${live.organizationId}/submissions/${submissionId}/autofill`, { token: ADMIN_TOKEN });
      expect(requested.status).toBe(202);
      expect(requested.body).toEqual({ requested: true });
      const autofill = await receiver.next(isPricingFor(sessionId, 'autofill'));
      expect(autofill.body.data).toMatchObject({ context: 'autofill', configHash: session.configHash, submission: { id: submissionId }, basePricing: session.basePricing });
      expect(autofill.body.data.callback.url).toMatch(CALLBACK_URL);

      const lineItems = [
        { description: 'Auto-filled second', quantity: 3, unitPrice: 10, sortOffset: 2 },
        { description: 'Auto-filled first', quantity: 1, unitPrice: 5, sortOffset: 1 },
      ];
      const put = await app.request('PUT', capability(autofill).adjustments, { body: { configHash: session.configHash, lineItems } });
      expect(put.status).toBe(200);
      const submission = (await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: live.apiKey })).body;
      // Frozen in display order (sortOffset), as an answer through the session is.
      expect(submission.externalPricing).toMatchObject({ configHash: session.configHash, subtotal: 35 });
      expect(submission.externalPricing.lineItems.map((item: { description: string }) => item.description)).toEqual(['Auto-filled first', 'Auto-filled second']);
      // The answer is also the latest external write for the session's final hash (api-v1 `adjustments`).
      const read = await app.request('GET', capability(autofill).read);
      expect(read.body.adjustments).toMatchObject({ configHash: session.configHash, subtotal: 35 });
      // No customer waited for it: it is no live-pricing wait in the metrics.
      expect(await waitsMeasured()).toBe(measuredBefore);
    });

    it('auto-fill under an Idempotency-Key whose answer was lost (a crash before it was stored): the retry answers 202 and asks the partner nothing more', async () => {
      const { sessionId, customerToken } = await configuredSession(app, live);
      const { submissionId } = (await submit(sessionId, customerToken)).body;
      const autofill = (key: string) =>
        app.request('POST', `/admin/v1/organizations/${live.organizationId}/submissions/${submissionId}/autofill`, { token: ADMIN_TOKEN, headers: { 'idempotency-key': key } });
      jest.spyOn(app.get(IdempotencyStore), 'put').mockRejectedValueOnce(new Error('the process died'));
      expect((await autofill('lost-autofill')).status).toBe(202);
      const retried = await autofill('lost-autofill');
      expect([retried.status, retried.body, retried.headers['idempotent-replayed']]).toEqual([202, { requested: true }, undefined]);
      const asked = async () => (await app.get(EventStore).readStream(submissionStream(submissionId))).filter((event) => event.type === 'submission.v1.autofillRequested');
      expect(await asked()).toHaveLength(1);
      // Another key asks again.
      expect((await autofill('another-autofill')).status).toBe(202);
      expect(await asked()).toHaveLength(2);
    });

    it('auto-fill: 404 for an unknown or foreign submission, 403 forbidden_plan while live pricing is off', async () => {
      const other = await liveOrganization(app, receiver);
      const { sessionId, customerToken } = await configuredSession(app, live);
      const { submissionId } = (await submit(sessionId, customerToken)).body;
      const autofill = (orgId: string, id: string) => app.request('POST', `/admin/v1/organizations/${orgId}/submissions/${id}/autofill`, { token: ADMIN_TOKEN });
      expect((await autofill(live.organizationId, 'sub_unknown')).status).toBe(404);
      expect((await autofill(other.organizationId, submissionId)).status).toBe(404);
      expect((await autofill('org_unknown', submissionId)).status).toBe(404);
      await setLivePricing(other.organizationId, false);
      const { sessionId: s2, customerToken: c2 } = await configuredSession(app, other);
      const { submissionId: otherSubmission } = (await submit(s2, c2)).body;
      const off = await autofill(other.organizationId, otherSubmission);
      expect(off.status).toBe(403);
      expect(off.body.error.code).toBe('forbidden_plan');
      expect((await app.request('POST', `/admin/v1/organizations/${live.organizationId}/submissions/${submissionId}/autofill`)).status).toBe(401);
    });
  });
});
