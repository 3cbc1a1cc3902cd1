import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { applyEvent, collectionName, matches } from '@lib/event-sourcing';
import { EventStore, type RecordedEvent } from '@lib/event-store';
import { leadStream } from '@lib/leads';
import { IdempotencyStore } from '@lib/http';
import { ReadStore, SqliteReadStore } from '@lib/read-store';
import { ProjectionRegistry } from '@lib/runtime';
import {
  DELIVERIES, MAX_PAYLOAD_BYTES, PayloadFinalizerRegistry, WebhookDeliveryReactor, WebhookSourceRegistry, type DeliveryRecord, type PayloadFinalizer, type WebhookSource,
} from '@lib/webhooks';
import { WebhookReceiver, type ReceivedWebhook } from '@lib/webhooks/testing/webhook-receiver';
import { DEMO_TEMPLATE } from '../apps/api-gateway/src/demo-template';
import { pause, QuoteFixtures, type Org } from './quotes-fixtures';
import { DocumentedShapes } from './support/documented-shapes';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

type HookOrg = Org & { path: string; secret: string | null };

const ATTEMPT_TIMEOUT_MS = 300;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A receiver's check of X-Service-Signature, written from decisions §9 alone. */
function serviceSignatureValid(received: ReceivedWebhook, secret: string): boolean {
  const header = String(received.headers['x-service-signature']);
  const parts = header.split(',').map((p) => p.split('='));
  const t = parts.find(([k]) => k === 't')?.[1];
  if (!t || Math.abs(Date.now() / 1000 - Number(t)) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${received.rawBody}`).digest();
  return parts.filter(([k]) => k === 'v1').some(([, hex]) => {
    const given = Buffer.from(hex, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

function standardWebhooksValid(received: ReceivedWebhook, secret: string): boolean {
  try {
    new Webhook(secret).verify(received.rawBody, received.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

describe('webhooks: outbox deliveries over HTTP to a real receiver', () => {
  let app: TestApp;
  let receiver: WebhookReceiver;
  let fixtures: QuoteFixtures;
  let documented: DocumentedShapes;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    app = await TestApp.start({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE_MS: '0,50,100', PRICING_RETRY_SCHEDULE_MS: '0,30', WEBHOOK_ATTEMPT_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS) });
    fixtures = new QuoteFixtures(app);
    documented = await DocumentedShapes.of(app);
  });
  afterAll(async () => {
    await app.close();
    await receiver.close();
  });

  let counter = 0;
  /** An organization whose webhookUrl is its own path on the receiver, with the signing secret its creation minted. */
  async function hookOrg(options: { secret?: boolean; webhookUrl?: boolean; pricingPath?: string } = {}): Promise<HookOrg> {
    const path = `/hooks/${++counter}`;
    const settings = {
      quoteDefaults: { taxRate: 21, validityDays: 30 },
      webhookUrl: options.webhookUrl === false ? null : receiver.url(path),
      ...(options.pricingPath ? { pricingWebhookUrl: receiver.url(options.pricingPath), pricingTimeoutMs: 1_000 } : {}),
    };
    if (options.secret === false) return { ...(await orgWithoutSecret(settings)), path, secret: null };
    const org = await fixtures.organization({ settings });
    let secret = org.signingSecret;
    if (secret === null) {
      const res = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
      expect(res.status).toBe(201);
      secret = res.body.secret;
    }
    return { ...org, path, secret };
  }

  /**
   * An organization with webhook URLs and no signing secret, as organizations created with a
   * webhook URL before their creation minted one (2026-11-26) are: its settings are appended
   * as such an organization's were, beside the commands, which would mint a secret.
   */
  async function orgWithoutSecret(settings: Record<string, unknown>): Promise<Org> {
    const org = await fixtures.organization({ settings: { quoteDefaults: settings.quoteDefaults as never } });
    const current = (await app.request('GET', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN })).body.settings;
    const { signingSecretConfigured: _none, ...stored } = { ...current, ...settings };
    await app.get(EventStore).appendToStream(
      `organization-${org.organizationId}`,
      [{ type: 'organization.v1.settingsChanged', data: { organizationId: org.organizationId, settings: stored, at: Date.now() }, metadata: { actor: 'admin' } }],
      'any',
    );
    for (let waited = 0; ; waited += 20) {
      const { body } = await app.request('GET', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN });
      if (body.settings.webhookUrl === settings.webhookUrl) return org;
      if (waited > 10_000) throw new Error(`the webhook URL is not readable; last seen ${JSON.stringify(body)}`);
      await pause(20);
    }
  }

  async function newLead(org: Org, overrides: Record<string, unknown> = {}): Promise<string> {
    const res = await app.request('POST', `/storefront/v1/${org.slug}/leads`, {
      body: { name: 'Jane Doe', email: 'jane@example.com', phone: '+31 6 1234 5678', message: 'Six tilt-turn windows, please.', ...overrides },
    });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  /** Polls the delivery log until the delivery of `type` for `entityId` exists (and matches `until`). */
  async function deliveryOf(org: Org, type: string, entityId: string, until: (r: any) => boolean = () => true): Promise<any> {
    let last: any;
    for (let waited = 0; waited < 10_000; waited += 20) {
      const res = await app.request('GET', `/api/v1/events?type=${type}&limit=100`, { token: org.apiKey });
      expect(res.status).toBe(200);
      last = res.body.data.find((r: any) => r.entityId === entityId);
      if (last && until(last)) return last;
      await pause(20);
    }
    throw new Error(`no matching ${type} delivery for ${entityId}; last seen ${JSON.stringify(last)}`);
  }

  async function deliveryById(org: Org, id: string, until: (r: any) => boolean): Promise<any> {
    let last: any;
    for (let waited = 0; waited < 10_000; waited += 20) {
      const res = await app.request('GET', `/api/v1/events/${id}`, { token: org.apiKey });
      expect(res.status).toBe(200);
      last = res.body;
      if (until(last)) return last;
      await pause(20);
    }
    throw new Error(`delivery ${id} did not reach the expected state; last seen ${JSON.stringify(last)}`);
  }

  const forEntity = (org: HookOrg, key: string, id: string) => (r: ReceivedWebhook) => r.path === org.path && (r.body?.data?.[key] as any)?.id === id;

  describe('delivering each event kind', () => {
    it('lead.created: the envelope, the headers and both signatures are what a receiver expects', async () => {
      const org = await hookOrg();
      const leadId = await newLead(org);
      const [request] = await receiver.waitFor(forEntity(org, 'lead', leadId));
      expect(request.body).toEqual({
        version: '1.0',
        id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        event: 'lead.created',
        eventType: 'lead.created',
        timestamp: expect.stringMatching(ISO_UTC),
        organization: { id: org.organizationId, name: `Org ${org.slug}`, slug: org.slug },
        orgLocale: 'en',
        customerLocale: null,
        data: { lead: { id: leadId, name: 'Jane Doe', email: 'jane@example.com', phone: '+31 6 1234 5678', message: 'Six tilt-turn windows, please.', createdAt: expect.any(Number) } },
      });
      expect(Math.abs(Date.parse(request.body.timestamp) - Date.now())).toBeLessThan(10_000);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-service-event']).toBe('lead.created');
      expect(request.headers['x-service-delivery']).toBe(request.body.id);
      expect(request.headers['x-service-delivery-generation']).toBe('1');
      expect(request.headers['webhook-id']).toBe(request.body.id);
      expect(request.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(serviceSignatureValid(request, org.secret!)).toBe(true);
      expect(standardWebhooksValid(request, org.secret!)).toBe(true);

      const record = await deliveryById(org, request.body.id, (r) => r.status === 'delivered');
      expect(record).toEqual({
        id: request.body.id,
        type: 'lead.created',
        entityType: 'lead',
        entityId: leadId,
        status: 'delivered',
        attempts: 1,
        maxAttempts: 3,
        lastError: null,
        scheduledFor: expect.any(Number),
        deliveredAt: expect.any(Number),
        createdAt: expect.any(Number),
        generation: 1,
        payload: request.body,
      });
      expect(documented.dataErrors(request.body)).toEqual([]);
      expect(documented.deliveryErrors(record)).toEqual([]);
      expect(receiver.requests(org.path)).toHaveLength(1);
    });

    it('submission.created: submission, customer, template, configuration and base pricing', async () => {
      const org = await hookOrg();
      const submissionId = await fixtures.submission(org, { locale: 'de', name: 'Ada Lovelace', email: 'ada@example.com' });
      const [request] = await receiver.waitFor(forEntity(org, 'submission', submissionId));
      expect(request.body).toMatchObject({ event: 'submission.created', eventType: 'submission.created', orgLocale: 'en', customerLocale: 'de' });
      expect(request.body.data).toEqual({
        submission: { id: submissionId, createdAt: expect.any(Number) },
        customer: { name: 'Ada Lovelace', email: 'ada@example.com', phone: null, companyName: null },
        template: { id: org.templateId, name: DEMO_TEMPLATE.name, slug: DEMO_TEMPLATE.slug },
        configuration: { width: 1200, height: 1400, componentCount: 2 },
        pricing: { source: 'base', subtotal: expect.any(Number) },
      });
      const submission = await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: org.apiKey });
      expect(request.body.data.pricing.subtotal).toBe(submission.body.basePricing.subtotal);
      expect(request.body.data.submission.createdAt).toBe(submission.body.createdAt);
      expect(documented.dataErrors(request.body)).toEqual([]);
      expect(standardWebhooksValid(request, org.secret!)).toBe(true);
      expect(await deliveryOf(org, 'submission.created', submissionId, (r) => r.status === 'delivered')).toMatchObject({ entityType: 'submission', attempts: 1 });
    });

    it('quote.created of the largest quote: sent whole, with its 200 long line items (api-v1: the event carries them)', async () => {
      const org = await hookOrg();
      const submissionId = await fixtures.submission(org);
      const lineItems = Array.from({ length: 200 }, (_, i) => ({ description: `${i} ${'läng-text-'.repeat(200)}`.slice(0, 2_000), quantity: 1, unitPrice: 10 }));
      const quoteId = await fixtures.createQuote(org, submissionId, { lineItems });
      const [created] = await receiver.waitFor((r) => r.path === org.path && r.body?.event === 'quote.created' && r.body.data.quote.id === quoteId);
      expect(Buffer.byteLength(created.rawBody)).toBeGreaterThan(400 * 1024); // over the 256 KiB cap it had until 2026-11-27
      expect(created.body.data.lineItemsOmitted).toBeUndefined();
      expect(created.body.data.lineItems.map((item: { description: string }) => item.description)).toEqual(lineItems.map((item) => item.description));
      expect(serviceSignatureValid(created, org.secret!)).toBe(true);
      const record = await deliveryById(org, created.body.id, (r) => r.status === 'delivered');
      expect(record).toMatchObject({ attempts: 1, lastError: null });
    });

    it('quote.created, quote.sent, quote.viewed, quote.accepted: the quote as it was at each step', async () => {
      const org = await hookOrg();
      const submissionId = await fixtures.submission(org, { locale: 'nl' });
      const quoteId = await fixtures.createQuote(org, submissionId);
      const quote = await fixtures.quote(org, quoteId);
      const subject = (status: string) => ({
        quote: { id: quoteId, quoteNumber: quote.quoteNumber, version: 1, status, total: quote.total, currency: 'EUR' },
        customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
        submission: { id: submissionId },
      });
      const ofType = (type: string) => (r: ReceivedWebhook) => r.path === org.path && r.body?.event === type && r.body.data.quote.id === quoteId;

      const [created] = await receiver.waitFor(ofType('quote.created'));
      expect(created.body.customerLocale).toBe('nl');
      expect(created.body.data).toEqual({
        ...subject('draft'),
        lineItems: quote.lineItems.map((item: any) => ({
          description: item.description,
          quantity: item.quantity,
          unitPrice: item.unitPrice,
          total: item.total,
          itemType: item.itemType,
          itemKey: expect.anything(),
          externalRef: null,
          order: item.order,
        })),
      });

      await fixtures.send(org, quoteId);
      const [sent] = await receiver.waitFor(ofType('quote.sent'));
      const expectedSent = subject('sent');
      expect(sent.body.data).toEqual({ ...expectedSent, quote: { ...expectedSent.quote, customerUrl: expect.stringMatching(/^http:\/\/localhost:3000\/q\/[A-Za-z0-9_-]+$/) } });
      expect(sent.body.customerLocale).toBe('nl');

      const token = new URL(sent.body.data.quote.customerUrl).pathname.split('/').pop()!;
      expect((await app.request('GET', `/storefront/v1/quotes/${token}`)).status).toBe(200);
      const [viewed] = await receiver.waitFor(ofType('quote.viewed'));
      expect(viewed.body.data).toEqual(subject('viewed'));
      expect(viewed.body.customerLocale).toBe('nl');

      expect((await app.request('POST', `/storefront/v1/quotes/${token}/accept`, { body: { name: 'Ada' } })).status).toBe(200);
      const [accepted] = await receiver.waitFor(ofType('quote.accepted'));
      expect(accepted.body.data).toEqual({ ...subject('accepted'), acceptance: { name: 'Ada' } });

      for (const request of [created, sent, viewed, accepted]) {
        expect(request.headers['x-service-event']).toBe(request.body.event);
        expect({ event: request.body.event, errors: documented.dataErrors(request.body) }).toEqual({ event: request.body.event, errors: [] });
        expect(standardWebhooksValid(request, org.secret!)).toBe(true);
        expect(serviceSignatureValid(request, org.secret!)).toBe(true);
      }
      const ids = new Set([created, sent, viewed, accepted].map((r) => r.body.id));
      expect(ids.size).toBe(4);
    });

    it('given an organization without a webhookUrl, then no delivery is recorded', async () => {
      const org = await hookOrg({ webhookUrl: false });
      const leadId = await newLead(org);
      const [event] = await app.get(EventStore).readStream(leadStream(leadId));
      await app.get(WebhookDeliveryReactor).react(event);
      const list = await app.request('GET', '/api/v1/events', { token: org.apiKey });
      expect(list.body).toEqual({ data: [], nextCursor: null });
    });
  });

  describe('the customer quote link is a capability: delivered, never logged', () => {
    it('quote.sent: the receiver gets the link on the first attempt, the retry and a redelivery; GET /events, GET /events/{id} and the stored record never hold it', async () => {
      const org = await hookOrg();
      const submissionId = await fixtures.submission(org);
      const quoteId = await fixtures.createQuote(org, submissionId);
      const quote = await fixtures.quote(org, quoteId);
      const sentTo = (r: ReceivedWebhook) => r.path === org.path && r.body?.event === 'quote.sent' && r.body.data.quote.id === quoteId;
      // Everything before the send has arrived, so the 500 below answers the first attempt of quote.sent.
      await receiver.waitFor((r) => r.path === org.path && r.body?.event === 'submission.created' && r.body.data.submission.id === submissionId);
      await receiver.waitFor((r) => r.path === org.path && r.body?.event === 'quote.created' && r.body.data.quote.id === quoteId);
      receiver.respondWith(org.path, 500);

      await fixtures.send(org, quoteId);
      const quoteToken = await fixtures.customerToken(quoteId);
      const link = `http://localhost:3000/q/${quoteToken}`;
      const [first, retry] = await receiver.waitFor(sentTo, 2);
      const id = first.body.id;
      const quoteData = { id: quoteId, quoteNumber: quote.quoteNumber, version: 1, status: 'sent', total: quote.total, currency: 'EUR' };
      for (const request of [first, retry]) {
        expect(request.body.data.quote).toEqual({ ...quoteData, customerUrl: link });
        expect(serviceSignatureValid(request, org.secret!)).toBe(true);
        expect(request.headers['webhook-id']).toBe(id);
      }
      expect((await app.request('GET', `/storefront/v1/quotes/${quoteToken}`)).status).toBe(200);

      // What a read-only key sees of the delivery log.
      const record = await deliveryById({ ...org, apiKey: org.readOnlyKey }, id, (r) => r.status === 'delivered');
      expect(record).toMatchObject({ type: 'quote.sent', attempts: 2, lastError: 'HTTP 500' });
      expect(record.payload.data).toEqual({ quote: quoteData, customer: { name: 'Ada Lovelace', email: 'ada@example.com' }, submission: { id: submissionId } });
      expect(documented.deliveryErrors(record)).toEqual([]);
      const list = await app.request('GET', '/api/v1/events?type=quote.sent&limit=100', { token: org.readOnlyKey });
      expect(list.body.data.map((r: any) => r.id)).toContain(id);
      const stored = async () => JSON.stringify(await app.get(ReadStore).get(DELIVERIES, id));
      for (const seen of [JSON.stringify(record), JSON.stringify(list.body), await stored()]) {
        expect(seen).not.toContain(quoteToken);
        expect(seen).not.toContain('/q/');
      }

      expect((await app.request('POST', `/api/v1/events/${id}/redeliver`, { token: org.apiKey })).status).toBe(200);
      const requests = await receiver.waitFor(sentTo, 3);
      expect(requests[2].body.data.quote.customerUrl).toBe(link);
      expect(requests[2].headers['x-service-delivery']).toBe(id);
      expect(requests[2].headers['x-service-delivery-generation']).toBe('2');
      // Signed: a Standard Webhooks receiver, which deduplicates on webhook-id, keeps the redelivery.
      expect(requests[2].headers['webhook-id']).toBe(`${id}_g2`);
      expect(standardWebhooksValid(requests[2], org.secret!)).toBe(true);
      await deliveryById(org, id, (r) => r.status === 'delivered' && r.attempts === 1);
      expect(await stored()).not.toContain(quoteToken);
    });
  });

  describe('failures and retries', () => {
    it('given 500 then 200, then it is delivered on the retry, attempts counted, same delivery id', async () => {
      const org = await hookOrg();
      receiver.respondWith(org.path, 500);
      const leadId = await newLead(org);
      const requests = await receiver.waitFor(forEntity(org, 'lead', leadId), 2);
      expect(new Set(requests.map((r) => r.headers['x-service-delivery'])).size).toBe(1);
      expect(requests.map((r) => r.headers['x-service-delivery-generation'])).toEqual(['1', '1']);
      for (const request of requests) expect(standardWebhooksValid(request, org.secret!)).toBe(true);
      const record = await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'delivered');
      expect(record).toMatchObject({ status: 'delivered', attempts: 2, maxAttempts: 3, lastError: 'HTTP 500', deliveredAt: expect.any(Number) });
      expect(requests[1].receivedAt - requests[0].receivedAt).toBeGreaterThanOrEqual(40);
    });

    it('given 410 Gone, then the delivery fails at once without retries', async () => {
      const org = await hookOrg();
      receiver.respondWith(org.path, 410);
      const leadId = await newLead(org);
      const record = await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'failed');
      expect(record).toMatchObject({ status: 'failed', attempts: 1, lastError: 'HTTP 410', deliveredAt: null });
      await pause(250);
      expect(receiver.requests(org.path)).toHaveLength(1);
    });

    it('given a receiver that hangs, then the attempt times out and the retry delivers', async () => {
      const org = await hookOrg();
      receiver.respondWith(org.path, 'hang');
      const leadId = await newLead(org);
      const record = await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'delivered');
      expect(record).toMatchObject({ attempts: 2, lastError: 'timeout' });
      const requests = receiver.requests(org.path);
      // The timeout runs from before the first request reached the receiver, which stamped it later: allow 100 ms for that.
      expect(requests[1].receivedAt - requests[0].receivedAt).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS - 50);
    });

    it('given a redirect, then it is not followed and counts as a failed attempt', async () => {
      const org = await hookOrg();
      receiver.respondWith(org.path, 307, 200);
      const leadId = await newLead(org);
      expect(await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'delivered')).toMatchObject({ attempts: 2, lastError: 'HTTP 307' });
    });

    it('given failures on every attempt, then the budget is spent and the delivery fails', async () => {
      const org = await hookOrg();
      receiver.respondWith(org.path, 500, 503, 502);
      const leadId = await newLead(org);
      const record = await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'failed');
      expect(record).toMatchObject({ status: 'failed', attempts: 3, maxAttempts: 3, lastError: 'HTTP 502', deliveredAt: null });
      await pause(250);
      expect(receiver.requests(org.path)).toHaveLength(3);
    });

    it('given no signing secret, then nothing is sent unsigned; once a secret exists a redelivery goes out', async () => {
      const org = await hookOrg({ secret: false });
      const leadId = await newLead(org);
      const record = await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'failed');
      expect(record).toMatchObject({ attempts: 3, lastError: 'no_signing_secret' });
      expect(receiver.requests(org.path)).toHaveLength(0);
      const { body } = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
      expect((await app.request('POST', `/api/v1/events/${record.id}/redeliver`, { token: org.apiKey })).status).toBe(200);
      const [request] = await receiver.waitFor(forEntity(org, 'lead', leadId));
      expect(standardWebhooksValid(request, body.secret)).toBe(true);
    });

    it('given a secret rotation, then deliveries carry a signature for the new and for the previous secret', async () => {
      const org = await hookOrg();
      const rotated = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
      const leadId = await newLead(org);
      const [request] = await receiver.waitFor(forEntity(org, 'lead', leadId));
      expect(String(request.headers['x-service-signature']).match(/v1=/g)).toHaveLength(2);
      expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
      for (const secret of [org.secret!, rotated.body.secret]) {
        expect(serviceSignatureValid(request, secret)).toBe(true);
        expect(standardWebhooksValid(request, secret)).toBe(true);
      }
    });
  });

  describe('POST /api/v1/events/{id}/redeliver', () => {
    it('given a delivered event, then 200 and a new attempt with the same delivery id, the next generation and a fresh budget', async () => {
      const org = await hookOrg();
      const leadId = await newLead(org);
      const first = await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'delivered');
      const res = await app.request('POST', `/api/v1/events/${first.id}/redeliver`, { token: org.apiKey });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ redelivered: true });
      const requests = await receiver.waitFor(forEntity(org, 'lead', leadId), 2);
      expect(requests.map((r) => r.headers['x-service-delivery'])).toEqual([first.id, first.id]);
      expect(requests.map((r) => r.headers['x-service-delivery-generation'])).toEqual(['1', '2']);
      expect(requests[1].rawBody).toBe(requests[0].rawBody);
      expect(first.generation).toBe(1);
      const again = await deliveryById(org, first.id, (r) => r.status === 'delivered' && r.generation === 2);
      expect(again).toMatchObject({ attempts: 1, maxAttempts: 3, deliveredAt: first.deliveredAt });
    });

    it('given a failed event, then redelivery sends it again through the normal pipeline', async () => {
      const org = await hookOrg();
      receiver.respondWith(org.path, 410);
      const leadId = await newLead(org);
      const failed = await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'failed');
      expect((await app.request('POST', `/api/v1/events/${failed.id}/redeliver`, { token: org.apiKey })).status).toBe(200);
      expect(await deliveryById(org, failed.id, (r) => r.status === 'delivered')).toMatchObject({ attempts: 1, lastError: 'HTTP 410' });
    });

    it('given a keyed redelivery whose answer was lost (a crash before it was stored), then its retry answers 200 as the first did and makes no second redelivery, even after another key made one', async () => {
      const org = await hookOrg();
      const leadId = await newLead(org);
      const first = await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'delivered');
      const redeliver = (key: string) => app.request('POST', `/api/v1/events/${first.id}/redeliver`, { token: org.apiKey, headers: { 'idempotency-key': key } });
      jest.spyOn(app.get(IdempotencyStore), 'put').mockRejectedValueOnce(new Error('the process died'));
      expect((await redeliver('lost-redeliver')).status).toBe(200);
      await deliveryById(org, first.id, (r) => r.status === 'delivered' && r.generation === 2);
      // Another key redelivers in between.
      expect((await redeliver('another-redeliver')).status).toBe(200);
      await deliveryById(org, first.id, (r) => r.status === 'delivered' && r.generation === 3);
      const retried = await redeliver('lost-redeliver');
      expect([retried.status, retried.body, retried.headers['idempotent-replayed']]).toEqual([200, { redelivered: true }, undefined]);
      expect((await deliveryById(org, first.id, () => true)).generation).toBe(3);
      const requests = await receiver.waitFor(forEntity(org, 'lead', leadId), 3);
      await pause(200);
      expect(requests.map((r) => r.headers['x-service-delivery-generation'])).toEqual(['1', '2', '3']);
      expect(receiver.requests(org.path)).toHaveLength(3);
    });

    it('given a delivery pending or being attempted, then 409 already_in_flight', async () => {
      const org = await hookOrg();
      // Every attempt of the budget hangs until it times out: in flight for about a second, not only until the first attempt's timeout.
      receiver.respondWith(org.path, 'hang', 'hang', 'hang');
      const leadId = await newLead(org);
      await receiver.waitFor(forEntity(org, 'lead', leadId));
      const inFlight = await deliveryOf(org, 'lead.created', leadId);
      expect(['pending', 'processing']).toContain(inFlight.status);
      const res = await app.request('POST', `/api/v1/events/${inFlight.id}/redeliver`, { token: org.apiKey });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('already_in_flight');
      await deliveryById(org, inFlight.id, (r) => r.status === 'failed');
    });

    it('given a read-only key, another organization or an unknown id, then 403 / 404', async () => {
      const [org, other] = await Promise.all([hookOrg(), hookOrg()]);
      const leadId = await newLead(org);
      const record = await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'delivered');
      const readOnly = await app.request('POST', `/api/v1/events/${record.id}/redeliver`, { token: org.readOnlyKey });
      expect(readOnly.status).toBe(403);
      expect(readOnly.body.error.code).toBe('read_only_key');
      const foreign = await app.request('POST', `/api/v1/events/${record.id}/redeliver`, { token: other.apiKey });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.code).toBe('not_found');
      expect((await app.request('POST', '/api/v1/events/evt_unknown/redeliver', { token: org.apiKey })).status).toBe(404);
    });
  });

  describe('GET /api/v1/events', () => {
    let org: HookOrg;
    let leads: string[];
    let failedLead: string;

    beforeAll(async () => {
      org = await hookOrg();
      leads = [];
      for (let i = 0; i < 3; i++) {
        leads.push(await newLead(org, { name: `Lead ${i}` }));
        await deliveryOf(org, 'lead.created', leads[i], (r) => r.status === 'delivered');
      }
      receiver.respondWith(org.path, 410);
      failedLead = await newLead(org, { name: 'Gone' });
      await deliveryOf(org, 'lead.created', failedLead, (r) => r.status === 'failed');
    });

    it('lists newest first and pages with the cursor', async () => {
      const seen: any[] = [];
      let cursor: string | null = null;
      do {
        const url: string = `/api/v1/events?type=lead.created&limit=3${cursor ? `&cursor=${cursor}` : ''}`;
        const res = await app.request('GET', url, { token: org.apiKey });
        expect(res.status).toBe(200);
        expect(res.body.data.length).toBeLessThanOrEqual(3);
        seen.push(...res.body.data);
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(seen.map((r) => r.entityId)).toEqual([failedLead, ...[...leads].reverse()]);
      expect(Object.keys(seen[0]).sort()).toEqual(['attempts', 'createdAt', 'deliveredAt', 'entityId', 'entityType', 'generation', 'id', 'lastError', 'maxAttempts', 'scheduledFor', 'status', 'type'].sort());
      for (let i = 1; i < seen.length; i++) expect(seen[i - 1].createdAt).toBeGreaterThanOrEqual(seen[i].createdAt);
    });

    it('filters by status and by type', async () => {
      const failed = await app.request('GET', '/api/v1/events?status=failed', { token: org.apiKey });
      expect(failed.body.data.map((r: any) => r.entityId)).toEqual([failedLead]);
      const delivered = await app.request('GET', '/api/v1/events?status=delivered&type=lead.created', { token: org.apiKey });
      expect(delivered.body.data.map((r: any) => r.entityId)).toEqual([...leads].reverse());
      const quotes = await app.request('GET', '/api/v1/events?type=quote.sent', { token: org.apiKey });
      expect(quotes.body).toEqual({ data: [], nextCursor: null });
    });

    it.each([
      ['type=lead.deleted', 'type'],
      ['status=done', 'status'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['cursor=not-a-cursor!', 'cursor'],
    ])('given %s, then 422 validation_error on %s', async (query, path) => {
      const res = await app.request('GET', `/api/v1/events?${query}`, { token: org.apiKey });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.fields.map((f: any) => f.path)).toContain(path);
    });

    it('given a cursor of another list, then 422', async () => {
      const leadsPage = await app.request('GET', '/api/v1/leads?limit=1', { token: org.apiKey });
      const res = await app.request('GET', `/api/v1/events?cursor=${leadsPage.body.nextCursor}`, { token: org.apiKey });
      expect(res.status).toBe(422);
    });

    it('keeps organizations apart: another organization sees none of it and gets 404 for its records', async () => {
      const other = await hookOrg();
      const list = await app.request('GET', '/api/v1/events', { token: other.apiKey });
      expect(list.body.data.filter((r: any) => leads.includes(r.entityId))).toEqual([]);
      const mine = await app.request('GET', `/api/v1/events?limit=1`, { token: org.apiKey });
      const foreign = await app.request('GET', `/api/v1/events/${mine.body.data[0].id}`, { token: other.apiKey });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.code).toBe('not_found');
    });

    it('answers 401 without a key', async () => {
      expect((await app.request('GET', '/api/v1/events')).status).toBe(401);
    });
  });

  describe('extension points (live pricing registers the same way)', () => {
    const STREAM = 'webhooktest-';
    let registered = false;

    /** A fast-path source and a finalizer that adds a per-generation callback token, as live pricing does. */
    function registerPricingLikeSource(): void {
      if (registered) return;
      registered = true;
      const source: WebhookSource = {
        name: 'test:priced',
        filter: { streamPrefixes: [STREAM] },
        async toWebhookEvents(event: RecordedEvent) {
          const data = event.data as { organizationId: string; sessionId: string; size?: number; itemsSize?: number };
          return [
            {
              type: 'test.priced',
              organizationId: data.organizationId,
              entityType: 'session',
              entityId: data.sessionId,
              customerLocale: 'nl',
              fastPath: true,
              data: {
                configHash: 'sha256:abc',
                context: 'configuration',
                ...(data.size ? { filler: 'x'.repeat(data.size) } : {}),
                ...(data.itemsSize ? { lineItems: [{ description: 'x'.repeat(data.itemsSize) }] } : {}),
              },
            },
          ];
        },
      };
      const finalizer: PayloadFinalizer = {
        eventType: 'test.priced',
        async finalize(delivery) {
          const data = delivery.payload.data as Record<string, unknown>;
          return { ...delivery.payload, data: { ...data, callback: { url: `http://localhost:3000/api/v1/configuration-sessions/tok_${delivery.id}_${delivery.generation}`, timeoutMs: 1_000 } } };
        },
        redact(payload) {
          const { callback: _secret, ...data } = payload.data as Record<string, unknown>;
          return { ...payload, data };
        },
      };
      app.get(WebhookSourceRegistry).register(source);
      app.get(PayloadFinalizerRegistry).register(finalizer);
    }

    async function appendTestEvent(org: Org, data: Record<string, unknown> = {}): Promise<string> {
      const sessionId = `ses_${Math.random().toString(36).slice(2)}`;
      await app.get(EventStore).appendToStream(`${STREAM}${sessionId}`, [{ type: 'webhooktest.v1.priced', data: { organizationId: org.organizationId, sessionId, ...data } }], 'no_stream');
      return sessionId;
    }

    it('a fast-path event goes to pricingWebhookUrl with the finalized callback; the log never holds the token; a redelivery mints the next one', async () => {
      registerPricingLikeSource();
      const pricingPath = '/pricing/redeliver';
      const org = await hookOrg({ pricingPath });
      const sessionId = await appendTestEvent(org);
      const [request] = await receiver.waitFor((r) => r.path === pricingPath && r.body?.event === 'test.priced');
      const id = request.body.id;
      expect(request.body.data).toEqual({ configHash: 'sha256:abc', context: 'configuration', callback: { url: expect.stringContaining(`tok_${id}_1`), timeoutMs: 1_000 } });
      expect(standardWebhooksValid(request, org.secret!)).toBe(true);
      expect(receiver.requests(org.path)).toHaveLength(0);

      const record = await deliveryById(org, id, (r) => r.status === 'delivered');
      expect(record).toMatchObject({ type: 'test.priced', entityType: 'session', entityId: sessionId, maxAttempts: 2 });
      expect(record.payload.data).toEqual({ configHash: 'sha256:abc', context: 'configuration' });
      expect(JSON.stringify(record)).not.toContain('tok_');
      expect(JSON.stringify(await app.get(ReadStore).get(DELIVERIES, id))).not.toContain('tok_');

      expect((await app.request('POST', `/api/v1/events/${id}/redeliver`, { token: org.apiKey })).status).toBe(200);
      const requests = await receiver.waitFor((r) => r.path === pricingPath && r.body?.id === id, 2);
      expect(requests[1].body.data.callback.url).toContain(`tok_${id}_2`);
      expect(requests[1].headers['x-service-delivery']).toBe(id);
      expect(requests.map((r) => r.headers['x-service-delivery-generation'])).toEqual(['1', '2']);
      expect(JSON.stringify(await app.get(ReadStore).get(DELIVERIES, id))).not.toContain('tok_');
    });

    it('given a payload over the 2 MiB cap only by its line items, then it is sent without them, marked so', async () => {
      registerPricingLikeSource();
      const pricingPath = '/pricing/items-omitted';
      const org = await hookOrg({ pricingPath });
      await appendTestEvent(org, { itemsSize: MAX_PAYLOAD_BYTES });
      const [request] = await receiver.waitFor((r) => r.path === pricingPath && r.body?.event === 'test.priced');
      expect(request.body.data).toEqual({ configHash: 'sha256:abc', context: 'configuration', lineItemsOmitted: true, callback: expect.any(Object) });
      expect(standardWebhooksValid(request, org.secret!)).toBe(true);
    });

    it('given a payload over the 2 MiB cap, then the record is failed with payload_too_large, not dropped, and nothing is sent', async () => {
      registerPricingLikeSource();
      const org = await hookOrg({ pricingPath: '/pricing/too-large' });
      const sessionId = await appendTestEvent(org, { size: MAX_PAYLOAD_BYTES });
      let record: DeliveryRecord | undefined;
      for (let waited = 0; waited < 10_000 && !record; waited += 20) {
        const list = await app.request('GET', '/api/v1/events?status=failed', { token: org.apiKey });
        record = list.body.data.find((r: any) => r.entityId === sessionId);
        if (!record) await pause(20);
      }
      expect(record).toMatchObject({ status: 'failed', attempts: 0, lastError: 'payload_too_large' });
      expect(receiver.requests('/pricing/too-large')).toHaveLength(0);
    });
  });

  describe('replays never send again', () => {
    it('given the outbox sees a domain event again, then no second delivery is created or sent', async () => {
      const org = await hookOrg();
      const leadId = await newLead(org);
      const record = await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'delivered');
      const [event] = await app.get(EventStore).readStream(leadStream(leadId));
      await app.get(WebhookDeliveryReactor).react(event);
      await app.get(WebhookDeliveryReactor).react(event);
      await pause(200);
      expect(receiver.requests(org.path)).toHaveLength(1);
      const list = await app.request('GET', '/api/v1/events', { token: org.apiKey });
      expect(list.body.data).toEqual([record]);
    });

    it('given every projection is rebuilt from the whole event log, then no delivery is created or sent', async () => {
      const org = await hookOrg();
      const leadId = await newLead(org);
      await deliveryOf(org, 'lead.created', leadId, (r) => r.status === 'delivered');
      const reads = app.get(ReadStore);
      const before = await reads.count(DELIVERIES);
      const requestsBefore = receiver.requests().length;

      const projections = app.get(ProjectionRegistry).all();
      expect(projections.flatMap((p) => Object.keys(p.collections).map((c) => collectionName(p, c)))).not.toContain(DELIVERIES);
      const rebuilt = new SqliteReadStore({ file: ':memory:' });
      const events = app.get(EventStore);
      let after = 0;
      for (;;) {
        const page = await events.readAll({ after, maxCount: 500 });
        if (page.length === 0) break;
        for (const event of page) {
          for (const projection of projections.filter((p) => matches(p.filter, event))) {
            await applyEvent(rebuilt, projection, event);
            await applyEvent(reads, projection, event);
          }
        }
        after = page[page.length - 1].position;
      }
      await pause(200);
      expect(await rebuilt.listCollections()).not.toContain(DELIVERIES);
      expect(await reads.count(DELIVERIES)).toBe(before);
      expect(receiver.requests()).toHaveLength(requestsBefore);
      await rebuilt.close();
    });
  });
});

describe('webhooks: SSRF protection when private networks are not allowed', () => {
  let app: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    app = await TestApp.start({ WEBHOOK_RETRY_SCHEDULE_MS: '0,20' });
  });
  afterAll(async () => {
    await app.close();
    await receiver.close();
  });

  const patch = (orgId: string, settings: Record<string, unknown>) => app.request('PATCH', `/admin/v1/organizations/${orgId}`, { token: ADMIN_TOKEN, body: { settings } });

  it.each([
    ['http://127.0.0.1:8080/hooks'],
    ['http://localhost/hooks'],
    ['http://[::1]/hooks'],
    ['http://[::ffff:10.0.0.1]/hooks'],
    ['http://169.254.169.254/latest/meta-data'],
    ['http://192.168.1.10/hooks'],
    ['http://2130706433/hooks'],
  ])('PATCH settings.webhookUrl %s → 422', async (url) => {
    const org = await app.createOrganization();
    const res = await patch(org.organizationId, { webhookUrl: url });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.fields.map((f: any) => f.path)).toEqual(['settings.webhookUrl']);
  });

  it('refuses a private pricingWebhookUrl too, and on organization creation', async () => {
    const org = await app.createOrganization();
    const res = await patch(org.organizationId, { pricingWebhookUrl: 'http://10.1.2.3/pricing' });
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields.map((f: any) => f.path)).toEqual(['settings.pricingWebhookUrl']);
    const created = await app.request('POST', '/admin/v1/organizations', {
      token: ADMIN_TOKEN,
      body: { name: 'Private', slug: `private-${Date.now()}`, settings: { webhookUrl: 'http://127.0.0.1/hooks' } },
    });
    expect(created.status).toBe(422);
  });

  it('accepts a public (or not yet resolvable) https URL', async () => {
    const org = await app.createOrganization();
    const res = await patch(org.organizationId, { webhookUrl: 'https://crm.example.com/hooks' });
    expect(res.status).toBe(200);
    expect(res.body.settings.webhookUrl).toBe('https://crm.example.com/hooks');
  });

  it('given a stored URL that points at a private address, then every attempt is refused before connecting', async () => {
    const org = await app.createOrganization({ settings: { webhookUrl: receiver.url('/private') } });
    await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
    const lead = await app.request('POST', `/storefront/v1/${org.slug}/leads`, { body: { name: 'Jane', email: 'jane@example.com', message: 'Hello' } });
    let record: any;
    for (let waited = 0; waited < 10_000; waited += 20) {
      const list = await app.request('GET', '/api/v1/events?status=failed', { token: org.apiKey });
      record = list.body.data.find((r: any) => r.entityId === lead.body.id);
      if (record) break;
      await pause(20);
    }
    expect(record).toMatchObject({ attempts: 2, lastError: 'blocked_address' });
    expect(receiver.requests()).toHaveLength(0);
  });
});
