import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import { WebhookReceiver, type ReceivedWebhook } from '@lib/webhooks/testing/webhook-receiver';
import { startPartner, withMarkup } from '../examples/pricing-partner/partner';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('the reference pricing partner (examples/pricing-partner) against the service', () => {
  let app: TestApp;
  let partner: Server;
  let output = '';

  beforeAll(async () => {
    // The callback URL must reach this app over HTTP, as it would in production.
    const port = await freePort();
    app = await TestApp.start({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
    await app.app.listen({ port, host: '127.0.0.1' });
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((output += String(chunk)), true));
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await new Promise<void>((resolve) => (partner ? partner.close(() => resolve()) : resolve()));
    await app.close();
  });

  it('verifies the webhook, applies its markup and answers the callback: the customer sees the partner price', async () => {
    const org = await app.createOrganization();
    const { body: signing } = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
    const partnerPort = await freePort();
    partner = startPartner({ secret: signing.secret, port: partnerPort, host: '127.0.0.1', markupPercent: 15, delayMs: 0 });
    const enabled = await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, {
      token: ADMIN_TOKEN,
      body: { settings: { pricingWebhookUrl: `http://127.0.0.1:${partnerPort}/webhooks`, externalPricingEnabled: true } },
    });
    expect(enabled.status).toBe(200);
    const template = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/templates`, { token: ADMIN_TOKEN, body: exampleTemplateBody() });
    const { sessionId, customerToken } = (await app.request('POST', `/storefront/v1/${org.slug}/sessions`, { body: { templateId: template.body.id } })).body;
    const configured = (await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() })).body;

    let view = configured;
    for (let i = 0; i < 200 && view.pricing.source !== 'external'; i++) {
      await pause(10);
      view = (await app.request('GET', `/storefront/v1/sessions/${sessionId}`, { token: customerToken })).body;
    }
    expect(view.pricing.source).toBe('external');
    expect(view.pricing.lineItems.map((i: { unitPrice: number }) => i.unitPrice)).toEqual(withMarkup(configured.basePricing.lineItems, 15).map((i) => i.unitPrice));
    for (let i = 0; i < 100 && !/priced sha256:/.test(output); i++) await pause(10);
    expect(output).toMatch(new RegExp(`configuration session=${sessionId}: priced sha256:`));
    expect(output).not.toMatch(/pct_/);
  });

  it('answers a redelivery (same delivery id, next generation, new callback URL) and skips a retry of a generation it has handled', async () => {
    // The service's deliveries reach the partner through a relay, so that a retry can be played to
    // it as the service sends one after a lost acknowledgement: same id, generation and body.
    const relay = await WebhookReceiver.start();
    const partnerPort = await freePort();
    const org = await app.createOrganization();
    const { body: signing } = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
    const relayed = startPartner({ secret: signing.secret, port: partnerPort, host: '127.0.0.1', markupPercent: 20, delayMs: 0 });
    const forward = async (delivery: ReceivedWebhook) => {
      const headers = ['content-type', 'x-service-event', 'x-service-delivery', 'x-service-delivery-generation', 'x-service-signature'];
      const res = await fetch(`http://127.0.0.1:${partnerPort}/webhooks`, {
        method: 'POST',
        headers: Object.fromEntries(headers.filter((h) => delivery.headers[h] !== undefined).map((h) => [h, String(delivery.headers[h])])),
        body: delivery.rawBody,
      });
      expect(res.status).toBe(200);
    };
    const logged = async (pattern: RegExp, count: number) => {
      const matches = () => output.split('\n').filter((line) => pattern.test(line)).length;
      for (let i = 0; i < 500 && matches() < count; i++) await pause(10);
      return matches();
    };
    try {
      await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, {
        token: ADMIN_TOKEN,
        body: { settings: { pricingWebhookUrl: relay.url('/pricing'), externalPricingEnabled: true } },
      });
      const template = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/templates`, { token: ADMIN_TOKEN, body: exampleTemplateBody() });
      const { sessionId, customerToken } = (await app.request('POST', `/storefront/v1/${org.slug}/sessions`, { body: { templateId: template.body.id } })).body;
      await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() });
      const priced = new RegExp(`configuration session=${sessionId}: priced sha256:\\S+ with \\+20 % → 200`);

      const [first] = await relay.waitFor((r) => r.body?.data?.session?.id === sessionId);
      const id: string = first.body.id;
      await forward(first);
      expect(await logged(priced, 1)).toBe(1);

      await forward(first);
      expect(await logged(new RegExp(`${id} generation 1: already handled`), 1)).toBe(1);
      // The same delivery replayed with the unsigned generation header raised: the partner reads
      // the generation from the signed body, so it is still a repeat.
      await forward({ ...first, headers: { ...first.headers, 'x-service-delivery-generation': '2' } });
      expect(await logged(new RegExp(`${id} generation 1: already handled`), 2)).toBe(2);
      await pause(100);
      expect(await logged(priced, 1)).toBe(1);

      for (const deadline = Date.now() + 10_000; Date.now() < deadline && (await app.request('GET', `/api/v1/events/${id}`, { token: org.apiKey })).body.status !== 'delivered'; ) await pause(10);
      expect((await app.request('POST', `/api/v1/events/${id}/redeliver`, { token: org.apiKey })).status).toBe(200);
      const [, redelivery] = await relay.waitFor((r) => r.body?.data?.session?.id === sessionId, 2);
      expect(redelivery.body.id).toBe(id);
      expect(redelivery.body.data.callback.url).not.toBe(first.body.data.callback.url);
      // The URL the partner had answers 401 now: only the redelivered one prices the session.
      expect((await app.request('GET', new URL(first.body.data.callback.url).pathname.replace(/\/adjustments$/, ''))).status).toBe(401);
      await forward(redelivery);
      expect(await logged(priced, 2)).toBe(2);
      expect(output).not.toMatch(/pct_/);
    } finally {
      await new Promise((resolve) => relayed.close(resolve));
      await relay.close();
    }
  });

  it('refuses a delivery that is not signed with its secret', async () => {
    const address = partner.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${address.port}/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
      body: JSON.stringify({ event: 'pricing.calculated', data: {} }),
    });
    expect(res.status).toBe(401);
  });
});
