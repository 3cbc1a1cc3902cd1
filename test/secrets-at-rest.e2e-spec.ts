import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { WebhookReceiver } from '@lib/webhooks/testing/webhook-receiver';
import { exampleConfigurationInput } from '@lib/templates/domain/example.fixture';
import { QuoteFixtures } from './quotes-fixtures';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

/** Every byte the product keeps in DATA_DIR (or in the files whose names pass `include`) except the outgoing e-mails, whose link is the point. */
function storedBytes(dir: string, include: (name: string) => boolean = () => true): Buffer {
  const parts: Buffer[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'mail') continue;
    if (statSync(path).isDirectory()) parts.push(storedBytes(path, include));
    else if (include(name)) parts.push(readFileSync(path));
  }
  return Buffer.concat(parts);
}

/**
 * Secrets at rest: after a run that uses every kind of credential, none of them is anywhere in
 * the stores (event store, read models, bus, files) in clear: API keys and customer tokens are
 * kept as hashes, pricing capability tokens are derived and never stored, quote link tokens are
 * derived and never in the event log, the admin token lives
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

  it('keeps no API key, customer token or capability token in clear in any store, and no quote link token in the event log', async () => {
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

    const quoteId = await f.createQuote(org, submitted.body.submissionId);
    await f.send(org, quoteId);
    const quoteToken = await f.customerToken(quoteId);
    expect((await app.request('GET', `/storefront/v1/quotes/${quoteToken}`)).status).toBe(200);
    const [sent] = await receiver.waitFor((r) => r.headers['x-service-event'] === 'quote.sent');
    expect((sent.body as any).data.quote.customerUrl).toBe(`http://localhost:3000/q/${quoteToken}`);

    const stored = storedBytes(app.config.dataDir);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.includes(Buffer.from(org.slug))).toBe(true); // the scan does see what is stored
    for (const [name, secret] of Object.entries({ apiKey: org.apiKey, readOnlyKey: org.readOnlyKey, adminToken: ADMIN_TOKEN, customerToken, capabilityToken })) {
      expect({ name, foundInStores: stored.includes(Buffer.from(secret)) }).toEqual({ name, foundInStores: false });
    }
    // The quote link is derived from the quote id, so the immutable logs (the events, and the bus
    // that relays them) never hold it. The outgoing e-mail queue keeps the link as it was sent
    // (docs/decisions/quote-pdfs-and-email.md); the webhook delivery log never holds it: it is
    // added to each attempt (docs/decisions/webhooks.md, test/webhooks.e2e-spec.ts).
    const logs = storedBytes(app.config.dataDir, (name) => name.startsWith('events.db') || name.startsWith('bus.db'));
    expect(logs.includes(Buffer.from(submitted.body.submissionId))).toBe(true); // the scan sees the logs
    expect({ quoteTokenInTheLogs: logs.includes(Buffer.from(quoteToken)) }).toEqual({ quoteTokenInTheLogs: false });
  });
});
