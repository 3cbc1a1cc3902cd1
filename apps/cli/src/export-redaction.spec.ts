import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { EventStore, RecordedEvent } from '@lib/event-store';
import { REDACTED } from '@lib/observability';
import type { ReadStore } from '@lib/read-store';
import { generateApiKey, hashApiKey } from '@lib/organizations/application/api-keys';
import { SigningSecretSeal } from '@lib/organizations/application/signing-secret-seal';
import { CapabilityTokens, hashCapabilityToken } from '@lib/pricing-loop';
import { generateCustomerToken, hashCustomerToken } from '@lib/sessions/application/customer-token';
import { randomBase62 } from '@lib/shared';
import { auditExport, type CliContext } from './commands';
import { redactEventData, redactSecretShapes } from './export-redaction';

const ORG = 'org_redact';
const signingSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const quoteToken = randomBase62(43);
const capabilityToken = new CapabilityTokens(randomBytes(32)).derive('dlv_1', 1);
const same = (type: string) => ({ type, storedType: type });
const seal = new SigningSecretSeal(randomBytes(32));

describe('audit:export redaction, per event type', () => {
  it('organization.v2.signingSecretRotated: the sealed secret goes too, the rest stays', () => {
    const data = { organizationId: ORG, secretId: 'whs_1', sealedSecret: seal.seal(signingSecret(), { organizationId: ORG, secretId: 'whs_1' }), previousValidUntil: 1_700_000_000_000, at: 1 };
    expect(redactEventData(same('organization.v2.signingSecretRotated'), data)).toEqual({ ...data, sealedSecret: REDACTED });
  });

  it('organization.v1.signingSecretRotated (stored in clear before secrets were sealed): the secret goes, the rest stays', () => {
    const data = { organizationId: ORG, secretId: 'sec_1', secret: signingSecret(), previousValidUntil: 1_700_000_000_000, at: 1 };
    expect(redactEventData(same('organization.v1.signingSecretRotated'), data)).toEqual({ ...data, secret: REDACTED });
  });

  it('quote.v1.sent: the customer link keeps its base, the token segment goes; the token hash stays', () => {
    const data = { organizationId: ORG, quoteId: 'quo_1', customerUrl: `https://quotes.example.com/q/${quoteToken}`, tokenHash: 'ab12', resend: false, at: 1 };
    const out = redactEventData(same('quote.v1.sent'), data) as typeof data;
    expect(out).toEqual({ ...data, customerUrl: `https://quotes.example.com/q/${REDACTED}` });
    expect(JSON.stringify(out)).not.toContain(quoteToken);
  });

  it('quote.v1.sent: a link that is not of the known shape goes whole; a derived link (null) stays null', () => {
    expect(redactEventData(same('quote.v1.sent'), { customerUrl: `https://quotes.example.com/quote?t=${quoteToken}` })).toEqual({ customerUrl: REDACTED });
    expect(redactEventData(same('quote.v1.sent'), { customerUrl: null, tokenHash: 'ab12' })).toEqual({ customerUrl: null, tokenHash: 'ab12' });
  });

  it('organization.v1.apiKeyCreated: never more of the key than the listed prefix; the key hash stays', () => {
    const key = generateApiKey();
    const data = { organizationId: ORG, keyId: 'key_1', name: 'ci', readOnly: false, keyHash: hashApiKey(key), keyPrefix: key.slice(0, 12), at: 1 };
    expect(redactEventData(same('organization.v1.apiKeyCreated'), data)).toEqual(data);
    const whole = redactEventData(same('organization.v1.apiKeyCreated'), { ...data, keyPrefix: key }) as typeof data;
    expect(whole.keyPrefix).toBe(key.slice(0, 12));
  });

  it.each(['organization.v1.created', 'organization.v1.settingsChanged'])('%s: credentials in the webhook URLs go, where they point stays', (type) => {
    const settings = {
      webhookUrl: 'https://hook:s3cr3tpass@hooks.example.com/ops?token=t0k3n&team=7',
      pricingWebhookUrl: 'https://pricing.example.com/price?api_key=k3y',
      externalPricingEnabled: true,
    };
    const out = redactEventData(same(type), { organizationId: ORG, settings, at: 1 }) as { settings: typeof settings };
    expect(out.settings).toEqual({
      webhookUrl: `https://${REDACTED}@hooks.example.com/ops?token=${REDACTED}&team=7`,
      pricingWebhookUrl: `https://pricing.example.com/price?api_key=${REDACTED}`,
      externalPricingEnabled: true,
    });
    expect(redactEventData(same(type), { settings: { webhookUrl: 'https://hooks.example.com/ops', pricingWebhookUrl: null } })).toEqual({
      settings: { webhookUrl: 'https://hooks.example.com/ops', pricingWebhookUrl: null },
    });
  });

  it('session.v1.pricingTokenIssued and session.v1.started record hashes only, which stay', () => {
    const grant = { organizationId: ORG, sessionId: 'ses_1', tokenHash: hashCapabilityToken(capabilityToken), configHash: 'c0ffee', deliveryId: 'dlv_1', generation: 1 };
    expect(redactEventData(same('session.v1.pricingTokenIssued'), grant)).toEqual(grant);
    const started = { organizationId: ORG, sessionId: 'ses_1', customerTokenHash: hashCustomerToken(generateCustomerToken()), at: 1 };
    expect(redactEventData(same('session.v1.started'), started)).toEqual(started);
  });

  it('the rules of the stored type apply to an upcast event too', () => {
    // a link shape only the explicit rule knows, so the defensive pass cannot stand in for it
    const data = { organizationId: ORG, customerUrl: `https://quotes.example.com/quote?t=${quoteToken}`, tokenHash: 'ab12' };
    expect(redactEventData({ type: 'quote.v9.sent', storedType: 'quote.v1.sent' }, data)).toEqual({ ...data, customerUrl: REDACTED });
  });
});

describe('audit:export redaction, the defensive pass', () => {
  it('replaces secrets of a known shape wherever they are quoted, and fields named as credentials', () => {
    const secrets = [signingSecret(), generateApiKey(), generateCustomerToken(), capabilityToken, 'adm_0123456789abcdef', quoteToken];
    const note = `rotated ${secrets[0]}; key ${secrets[1]}; customer ${secrets[2]}; pricing ${secrets[3]}; admin ${secrets[4]}; link https://x.example/q/${secrets[5]}`;
    const out = redactEventData(same('lead.v1.created'), { organizationId: ORG, leadId: 'lead_1', message: note, extra: [{ token: 'opaque-value' }], tokenHash: 'ab12' });
    const text = JSON.stringify(out);
    for (const secret of [...secrets, 'opaque-value']) expect(text).not.toContain(secret);
    expect(out).toMatchObject({ organizationId: ORG, leadId: 'lead_1', extra: [{ token: REDACTED }], tokenHash: 'ab12' });
  });

  it('leaves data without secrets exactly as it is', () => {
    const data = { organizationId: ORG, quoteId: 'quo_1', changeDescription: 'glazing 2/3, see note_7', lineItems: [{ description: 'Triple glazing', quantity: 2 }], at: 1 };
    expect(redactEventData(same('quote.v2.lineItemsReplaced'), data)).toEqual(data);
    expect(redactSecretShapes({ type: 'api_key', id: 'key_1' })).toEqual({ type: 'api_key', id: 'key_1' });
  });
});

describe('audit:export writes no secret or capability token', () => {
  function recorded(position: number, streamId: string, type: string, data: unknown, metadata: Record<string, string> = { actor: 'admin' }): RecordedEvent {
    return { id: `evt_${position}`, streamId, type, data, metadata, revision: position - 1, position, recordedAt: 1_767_225_600_000 + position };
  }

  it('redacts upcast and current events alike and keeps every event with its id, type, position and actor', async () => {
    const secret = signingSecret();
    const sealedSecret = seal.seal(signingSecret(), { organizationId: ORG, secretId: 'sec_2' });
    const log = [
      recorded(1, `organization-${ORG}`, 'organization.v1.signingSecretRotated', { organizationId: ORG, secretId: 'sec_1', secret, previousValidUntil: 0, at: 1 }),
      recorded(2, 'quote-quo_1', 'quote.v1.sent', { organizationId: ORG, quoteId: 'quo_1', customerUrl: `https://quotes.example.com/q/${quoteToken}`, tokenHash: 'ab12', at: 2 }, { actor: 'apiKey:key_1' }),
      // stored as v1 and upcast to v2 on read; its free text quotes the secret
      recorded(3, 'quote-quo_1', 'quote.v1.lineItemsReplaced', { organizationId: ORG, quoteId: 'quo_1', version: 1, lineItems: [], totals: { subtotal: 0, taxAmount: 0, total: 0 }, changeDescription: `oops ${secret}`, at: 3 }),
      recorded(4, 'session-ses_1', 'session.v1.pricingTokenIssued', { organizationId: ORG, sessionId: 'ses_1', tokenHash: hashCapabilityToken(capabilityToken), deliveryId: 'dlv_1' }, { actor: `relay ${capabilityToken}`, correlationId: `cst_${randomBase62(40)}` }),
      recorded(5, `organization-${ORG}`, 'organization.v2.signingSecretRotated', { organizationId: ORG, secretId: 'sec_2', sealedSecret, previousValidUntil: 5, at: 5 }),
    ];
    const events = {
      readAll: async ({ after }: { after: number }) => log.filter((event) => event.position > after),
      readStream: async (streamId: string) => log.filter((event) => event.streamId === streamId),
    } as unknown as EventStore;
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk) => (text += chunk));
    const context: CliContext = { events, reads: {} as ReadStore, projections: () => [], out, err: new PassThrough() };

    expect(await auditExport(context, { organizationId: ORG })).toBe(0);

    for (const leak of ['whsec_', sealedSecret, quoteToken, 'pct_', 'cst_']) expect(text).not.toContain(leak);
    const lines = text.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.id, line.position, line.type, line.storedType])).toEqual([
      ['evt_1', 1, 'organization.v1.signingSecretRotated', 'organization.v1.signingSecretRotated'],
      ['evt_2', 2, 'quote.v1.sent', 'quote.v1.sent'],
      ['evt_3', 3, 'quote.v2.lineItemsReplaced', 'quote.v1.lineItemsReplaced'],
      ['evt_4', 4, 'session.v1.pricingTokenIssued', 'session.v1.pricingTokenIssued'],
      ['evt_5', 5, 'organization.v2.signingSecretRotated', 'organization.v2.signingSecretRotated'],
    ]);
    expect(lines[0].data).toMatchObject({ secretId: 'sec_1', secret: REDACTED });
    expect(lines[4].data).toMatchObject({ secretId: 'sec_2', sealedSecret: REDACTED, previousValidUntil: 5 });
    expect(lines[1]).toMatchObject({ actor: { type: 'api_key', id: 'key_1' }, data: { customerUrl: `https://quotes.example.com/q/${REDACTED}`, tokenHash: 'ab12' } });
    expect(lines[2].data).toMatchObject({ changeDescription: `oops ${REDACTED}`, previousTotals: null });
    expect(lines[3]).toMatchObject({ actor: { type: 'other', id: `relay ${REDACTED}` }, correlationId: REDACTED });
  });
});
