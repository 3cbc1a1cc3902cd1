import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { WebhookReceiver } from '@lib/webhooks/testing/webhook-receiver';
import { exampleConfigurationInput } from '@lib/templates/domain/example.fixture';
import { QuoteFixtures } from './quotes-fixtures';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

/** Every byte the product keeps in DATA_DIR except the outgoing e-mails, whose link is the point. */
function storedBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'mail') continue;
    parts.push(statSync(path).isDirectory() ? storedBytes(path) : readFileSync(path));
  }
  return Buffer.concat(parts);
}

/**
 * Secrets at rest: after a run that uses every kind of credential, none of them is anywhere in
 * the stores (event store, read models, bus, files) in clear: API keys and customer tokens are
 * kept as hashes, pricing capability tokens are derived and never stored, the admin token lives
 * only in its own file when generated (here it is given). Webhook signing secrets are stored as
 * they are: the product needs them to sign.
 */
describe('secrets at rest', () => {
  let app: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    app = await TestApp.start({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  afterAll(async () => {
    await app.close();
    await receiver.close();
  });

  it('keeps no API key, customer token or capability token in clear in any store', async () => {
    const f = new QuoteFixtures(app);
    const org = await f.organization({ settings: { webhookUrl: receiver.url(), externalPricingEnabled: true, pricingTimeoutMs: 30_000 } });
    expect((await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN })).status).toBe(201);
    expect((await app.request('GET', '/api/v1/organization', { token: org.apiKey })).status).toBe(200);
    expect((await app.request('GET', '/api/v1/organization', { token: org.readOnlyKey })).status).toBe(200);
    expect((await app.request('GET', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN })).status).toBe(200);

    const started = await app.request('POST', `/storefront/v1/${org.slug}/sessions`, { body: { templateId: org.templateId } });
    const { sessionId, customerToken } = started.body;
    const configured = await app.request('PUT', `/storefront/v1/sessions/${sessionId}/configuration`, { token: customerToken, body: exampleConfigurationInput() });
    expect(configured.status).toBe(200);
    const [pricing] = await receiver.waitFor((r) => r.headers['x-service-event'] === 'pricing.calculated');
    const callback: string = (pricing.body as any).data.callback.url;
    const capabilityToken = callback.split('/').slice(-2)[0];
    expect((await app.request('GET', `/api/v1/configuration-sessions/${capabilityToken}`)).status).toBe(200);
    const submitted = await app.request('POST', `/storefront/v1/sessions/${sessionId}/submit`, { token: customerToken, body: { customer: { name: 'Ada', email: 'ada@example.com' } } });
    expect(submitted.status).toBe(201);

    const stored = storedBytes(app.config.dataDir);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.includes(Buffer.from(org.slug))).toBe(true); // the scan does see what is stored
    for (const [name, secret] of Object.entries({ apiKey: org.apiKey, readOnlyKey: org.readOnlyKey, adminToken: ADMIN_TOKEN, customerToken, capabilityToken })) {
      expect({ name, foundInStores: stored.includes(Buffer.from(secret)) }).toEqual({ name, foundInStores: false });
    }
  });
});
