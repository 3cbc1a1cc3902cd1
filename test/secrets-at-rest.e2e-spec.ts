import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { MongoClient } from 'mongodb';
import { Webhook } from 'standardwebhooks';
import { createLogger } from '@lib/observability';
import { WebhookReceiver, type ReceivedWebhook } from '@lib/webhooks/testing/webhook-receiver';
import { exampleConfigurationInput } from '@lib/templates/domain/example.fixture';
import { QuoteFixtures } from './quotes-fixtures';
import { startProduct } from './support/product-process';
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

/** A logger of errors only, and the lines it wrote, for a test to read. */
function capturedErrors() {
  const written: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  });
  return { written, logger: createLogger({ level: 'error', name: 'test', destination }) };
}

/** Whether a delivery verifies with `secret` as a receiver checks it: X-Service-Signature by hand, and the Standard Webhooks headers with their library. */
function verifiesWith(received: ReceivedWebhook, secret: string): { service: boolean; standard: boolean } {
  const parts = String(received.headers['x-service-signature']).split(',').map((part) => part.split('='));
  const t = parts.find(([name]) => name === 't')?.[1];
  const expected = createHmac('sha256', secret).update(`${t}.${received.rawBody}`).digest();
  const service = parts.some(([name, hex]) => name === 'v1' && Buffer.from(hex, 'hex').length === expected.length && timingSafeEqual(Buffer.from(hex, 'hex'), expected));
  let standard = true;
  try {
    new Webhook(secret).verify(received.rawBody, received.headers as Record<string, string>);
  } catch {
    standard = false;
  }
  return { service, standard };
}

/**
 * Secrets at rest: after a run that uses every kind of credential, none of them is anywhere in
 * the stores (event store, read models, bus, files) in clear: API keys and customer tokens are
 * kept as hashes, pricing capability tokens are derived and never stored, quote link tokens are
 * derived and never in the event log, the admin token lives only in its own file when generated
 * (here it is given). Webhook signing secrets are sealed (AES-256-GCM) under the signing-secret
 * key before they go into an event, so neither the event log nor the bus that relays it holds one
 * (docs/decisions/webhooks.md, Signing).
 */
/** Every stored idempotency record of the gateways' shared state on MongoDB, as bytes to scan. */
/** Every document of every collection of the MongoDB database (the read store, when it is used). */
async function mongoDocuments(url: string): Promise<Buffer> {
  const client = await MongoClient.connect(url);
  try {
    const parts: Buffer[] = [];
    for (const { name } of await client.db().listCollections({}, { nameOnly: true }).toArray()) {
      parts.push(Buffer.from(JSON.stringify(await client.db().collection(name).find({}).toArray())));
    }
    return Buffer.concat(parts);
  } finally {
    await client.close();
  }
}

async function mongoIdempotencyKeys(url: string): Promise<Buffer> {
  const client = await MongoClient.connect(url);
  try {
    return Buffer.from(JSON.stringify(await client.db().collection('gateway_idempotency_keys').find({}).toArray()));
  } finally {
    await client.close();
  }
}

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
    // The customer's answer under an Idempotency-Key, as the quote page sends it: the key's scope names the route.
    const accepted = await app.request('POST', `/storefront/v1/quotes/${quoteToken}/accept`, { body: { name: 'Ada' }, headers: { 'idempotency-key': 'answer-1' } });
    expect(accepted.status).toBe(200);
    const [sent] = await receiver.waitFor((r) => r.headers['x-service-event'] === 'quote.sent');
    expect((sent.body as any).data.quote.customerUrl).toBe(`http://localhost:3000/q/${quoteToken}`);

    const stored = storedBytes(app.config.dataDir);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.includes(Buffer.from(org.slug))).toBe(true); // the scan does see what is stored
    for (const [name, secret] of Object.entries({ apiKey: org.apiKey, readOnlyKey: org.readOnlyKey, adminToken: ADMIN_TOKEN, customerToken, capabilityToken })) {
      expect({ name, foundInStores: stored.includes(Buffer.from(secret)) }).toEqual({ name, foundInStores: false });
    }
    // The quote link is derived from the quote id, so no store holds it: not the immutable logs (the
    // events, and the bus that relays them), not the e-mail queue (a slot stands for it, filled at
    // each attempt; docs/decisions/quote-pdfs-and-email.md), not the webhook delivery log (it is
    // added to each attempt; docs/decisions/webhooks.md). Only the e-mail as sent has it (DATA_DIR/mail).
    const [mail] = await f.awaitMails(quoteId, 1);
    expect(mail.text).toContain(`/q/${quoteToken}`);
    const logs = storedBytes(app.config.dataDir, (name) => name.startsWith('events.db') || name.startsWith('bus.db'));
    expect(logs.includes(Buffer.from(submitted.body.submissionId))).toBe(true); // the scan sees the logs
    expect({ quoteTokenInTheLogs: logs.includes(Buffer.from(quoteToken)) }).toEqual({ quoteTokenInTheLogs: false });
    const queue = Buffer.concat([storedBytes(app.config.dataDir), app.config.mongodbUrl ? await mongoDocuments(app.config.mongodbUrl) : Buffer.alloc(0)]);
    expect(queue.includes(Buffer.from(quoteId))).toBe(true); // the scan sees the queue
    expect({ quoteTokenInTheStores: queue.includes(Buffer.from(quoteToken)) }).toEqual({ quoteTokenInTheStores: false });
    // Nor the idempotency keys: their scope holds the token's hash (in MongoDB when it is used).
    const keys = app.config.mongodbUrl ? await mongoIdempotencyKeys(app.config.mongodbUrl) : storedBytes(app.config.dataDir, (name) => name.startsWith('idempotency.db'));
    expect(keys.includes(Buffer.from('answer-1'))).toBe(true); // the scan sees the key
    expect({ quoteTokenInTheIdempotencyKeys: keys.includes(Buffer.from(quoteToken)) }).toEqual({ quoteTokenInTheIdempotencyKeys: false });
  });
  it('keeps webhook signing secrets sealed: none is in clear anywhere in DATA_DIR, and deliveries verify with the secrets shown, during a rotation too', async () => {
    const f = new QuoteFixtures(app);
    const org = await f.organization();
    const path = '/sealed-secrets';
    const isSubmission = (r: ReceivedWebhook) => r.path === path && r.headers['x-service-event'] === 'submission.created';

    // Enabling live pricing mints the first secret and shows it in this answer.
    const enabled = await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN, body: { settings: { webhookUrl: receiver.url(path), externalPricingEnabled: true } } });
    expect(enabled.status).toBe(200);
    const minted: string = enabled.body.settings.signingSecret;
    expect(minted).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    await f.submission(org);
    const [first] = await receiver.waitFor(isSubmission);
    expect(verifiesWith(first, minted)).toEqual({ service: true, standard: true });

    // A rotation: the new secret signs, and the minted one beside it for 24 h.
    const rotated = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
    expect(rotated.status).toBe(201);
    const current: string = rotated.body.secret;
    await f.submission(org);
    const during = (await receiver.waitFor(isSubmission, 2)).find((r) => r !== first)!;
    expect(verifiesWith(during, current)).toEqual({ service: true, standard: true });
    expect(verifiesWith(during, minted)).toEqual({ service: true, standard: true });

    const stored = storedBytes(app.config.dataDir);
    const logs = storedBytes(app.config.dataDir, (name) => name.startsWith('events.db') || name.startsWith('bus.db'));
    expect(logs.includes(Buffer.from('organization.v2.signingSecretRotated'))).toBe(true); // the scan sees the rotations, in the events and on the bus
    expect({ whsecAnywhere: stored.includes(Buffer.from('whsec_')) }).toEqual({ whsecAnywhere: false });
    for (const [name, secret] of Object.entries({ minted, current })) {
      // without its prefix too, as text and as the key bytes it stands for
      const key = secret.slice('whsec_'.length);
      expect({ name, foundInStores: stored.includes(Buffer.from(key)) || stored.includes(Buffer.from(key, 'base64')) }).toEqual({ name, foundInStores: false });
    }
  });
});

describe('DATA_DIR as the product creates it', () => {
  let parent: string;
  beforeAll(() => {
    parent = mkdtempSync(join(tmpdir(), 'data-dir-mode-'));
  });
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it('is readable by the product\'s user only, and so are the keys it generates at start, the signing-secret key among them', async () => {
    const dataDir = join(parent, 'data');
    const product = await startProduct({ DATA_DIR: dataDir, ADMIN_TOKEN, PRICING_TOKEN_SECRET: '', QUOTE_LINK_SECRET: '', FILE_LINK_SECRET: '', SIGNING_SECRET_KEY: '' });
    try {
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      for (const key of ['pricing-token.key', 'signing-secret.key']) {
        expect({ key, mode: statSync(join(dataDir, key)).mode & 0o777 }).toEqual({ key, mode: 0o600 });
      }
    } finally {
      product.child.kill('SIGTERM');
      await product.exited;
    }
  }, 90_000);
});

describe('signing-secret keys: a secret sealed with another key than the outbox has, and a key replaced by another', () => {
  const ENV = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE_MS: '0,1000,1000,1000,1000,1000' };
  let receiver: WebhookReceiver;
  let dataDir: string;
  let app: TestApp | null = null;
  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    dataDir = mkdtempSync(join(tmpdir(), 'other-key-'));
  });
  afterAll(async () => {
    await app?.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('signs nothing with it and stops nothing: the deliveries fail with no_signing_secret, one error says what to do, and a rotation makes them go out', async () => {
    app = await TestApp.start({ ...ENV, SIGNING_SECRET_KEY: 'a'.repeat(40) }, dataDir);
    const f = new QuoteFixtures(app);
    const org = await f.organization();
    const path = '/other-key';
    const enabled = await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN, body: { settings: { webhookUrl: receiver.url(path) } } });
    expect(enabled.body.settings.signingSecret).toMatch(/^whsec_/);
    await app.close();

    // The same DATA_DIR with another key: a process that was not given the key the secret was sealed with.
    const { written, logger } = capturedErrors();
    app = await TestApp.start({ ...ENV, SIGNING_SECRET_KEY: 'b'.repeat(40) }, dataDir, logger);
    await new QuoteFixtures(app).submission(org);
    const failing = async () => (await app!.request('GET', '/api/v1/events?type=submission.created', { token: org.apiKey })).body.data[0];
    for (let tries = 0; !((await failing())?.attempts >= 2) && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await failing()).toMatchObject({ status: 'pending', lastError: 'no_signing_secret' });
    expect((await app.request('GET', '/healthz')).status).toBe(200);
    const errors = written.join('').split('\n').filter((line) => line.includes('cannot be unsealed'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(org.organizationId);
    expect(errors[0]).toContain('SIGNING_SECRET_KEY');
    expect(receiver.requests(path)).toHaveLength(0);

    const rotated = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
    const [delivered] = await receiver.waitFor((r) => r.path === path && r.headers['x-service-event'] === 'submission.created');
    expect(verifiesWith(delivered, rotated.body.secret)).toEqual({ service: true, standard: true });
    expect(verifiesWith(delivered, enabled.body.settings.signingSecret)).toEqual({ service: false, standard: false });
  });

  const [keyA, keyB] = ['a'.repeat(40), 'b'.repeat(40)];

  /** Runs `body` on a DATA_DIR of its own, after closing the app of the test before; closes its app and removes the directory afterwards. */
  async function onOwnDataDir(prefix: string, body: (dir: string) => Promise<void>): Promise<void> {
    await app?.close();
    app = null;
    const dir = mkdtempSync(join(tmpdir(), prefix));
    try {
      await body(dir);
    } finally {
      await (app as TestApp | null)?.close();
      app = null;
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('keeps signing with the secret minted under the old key, logs no error, and a rotation seals the next secret under the new key', async () => {
    await onOwnDataDir('replaced-key-', async (dataDir) => {
      app = await TestApp.start({ ...ENV, SIGNING_SECRET_KEY: keyA }, dataDir);
      const f = new QuoteFixtures(app);
      const org = await f.organization();
      const path = '/replaced-key';
      const isSubmission = (r: ReceivedWebhook) => r.path === path && r.headers['x-service-event'] === 'submission.created';
      const enabled = await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN, body: { settings: { webhookUrl: receiver.url(path) } } });
      const minted: string = enabled.body.settings.signingSecret;
      expect(minted).toMatch(/^whsec_/);
      await app.close();

      // The operator replaces the key: B is current, A is listed as previous, on the same DATA_DIR.
      const { written, logger } = capturedErrors();
      app = await TestApp.start({ ...ENV, SIGNING_SECRET_KEY: keyB, SIGNING_SECRET_PREVIOUS_KEYS: keyA }, dataDir, logger);
      await new QuoteFixtures(app).submission(org);
      const [delivered] = await receiver.waitFor(isSubmission);
      expect(verifiesWith(delivered, minted)).toEqual({ service: true, standard: true });
      expect(written.join('').split('\n').filter((line) => line.includes('cannot be unsealed'))).toEqual([]);

      // The rotation seals the new secret under B: it signs once A is dropped (the minted secret, sealed under A, then no longer does).
      const rotated = await app.request('POST', `/admin/v1/organizations/${org.organizationId}/signing-secret`, { token: ADMIN_TOKEN });
      expect(rotated.status).toBe(201);
      await app.close();
      app = await TestApp.start({ ...ENV, SIGNING_SECRET_KEY: keyB }, dataDir);
      await new QuoteFixtures(app).submission(org);
      const after = (await receiver.waitFor(isSubmission, 2)).find((r) => r !== delivered)!;
      expect(verifiesWith(after, rotated.body.secret)).toEqual({ service: true, standard: true });
      expect(verifiesWith(after, minted)).toEqual({ service: false, standard: false });
    });
  });

  it('keeps signing with a secret sealed under the key generated into DATA_DIR once SIGNING_SECRET_KEY replaces it, without listing it', async () => {
    await onOwnDataDir('replaced-generated-key-', async (dataDir) => {
      app = await TestApp.start(ENV, dataDir);
      const org = await new QuoteFixtures(app).organization();
      const path = '/replaced-generated-key';
      const enabled = await app.request('PATCH', `/admin/v1/organizations/${org.organizationId}`, { token: ADMIN_TOKEN, body: { settings: { webhookUrl: receiver.url(path) } } });
      const minted: string = enabled.body.settings.signingSecret;
      await app.close();

      app = await TestApp.start({ ...ENV, SIGNING_SECRET_KEY: keyB }, dataDir);
      await new QuoteFixtures(app).submission(org);
      const [delivered] = await receiver.waitFor((r) => r.path === path && r.headers['x-service-event'] === 'submission.created');
      expect(verifiesWith(delivered, minted)).toEqual({ service: true, standard: true });
    });
  });
});
