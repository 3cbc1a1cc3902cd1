import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signatureHeaders } from './signing';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** What a receiver writes from decisions §9 alone: `t=<t>,v1=<hex>[,v1=<hex>]`, HMAC keyed by the secret string as issued. */
function verifyServiceSignature(header: string, body: string, secret: string, now = Math.floor(Date.now() / 1000), toleranceS = 300): boolean {
  const parts = header.split(',').map((p) => p.split('=') as [string, string]);
  const t = parts.find(([k]) => k === 't')?.[1];
  if (!t || Math.abs(now - Number(t)) > toleranceS) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return parts
    .filter(([k]) => k === 'v1')
    .some(([, hex]) => {
      const given = Buffer.from(hex, 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

const lowercase = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

describe('webhook signatures', () => {
  const body = JSON.stringify({ version: '1.0', id: 'evt_1', event: 'lead.created', data: { lead: { name: 'Jürgen 🪟' } } });
  const now = Math.floor(Date.now() / 1000);

  it('given one secret, then a Standard Webhooks library verifies the delivery as a receiver would', () => {
    const secret = newSecret();
    const headers = signatureHeaders({ deliveryId: 'evt_1', generation: 1, eventType: 'lead.created', timestamp: now, body, secrets: [secret] });
    expect(new Webhook(secret).verify(body, lowercase(headers))).toEqual(JSON.parse(body));
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-timestamp']).toBe(String(now));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });

  it('given one secret, then X-Service-Signature verifies with the secret string as issued (whsec_ included)', () => {
    const secret = newSecret();
    const headers = signatureHeaders({ deliveryId: 'evt_1', generation: 1, eventType: 'lead.created', timestamp: now, body, secrets: [secret] });
    expect(headers['X-Service-Signature']).toMatch(new RegExp(`^t=${now},v1=[0-9a-f]{64}$`));
    expect(verifyServiceSignature(headers['X-Service-Signature'], body, secret)).toBe(true);
    // keyed by the decoded bytes instead, it must not verify: the two schemes differ on purpose
    const decoded = createHmac('sha256', Buffer.from(secret.slice(6), 'base64')).update(`${now}.${body}`).digest('hex');
    expect(headers['X-Service-Signature']).not.toContain(decoded);
  });

  it('given the identifying headers, then event and delivery id are stated', () => {
    const headers = signatureHeaders({ deliveryId: 'evt_9', generation: 1, eventType: 'quote.sent', timestamp: now, body, secrets: [newSecret()] });
    expect(headers['X-Service-Event']).toBe('quote.sent');
    expect(headers['X-Service-Delivery']).toBe('evt_9');
  });

  it('given a rotation (two live secrets), then a receiver holding either secret verifies both signature schemes', () => {
    const [current, previous] = [newSecret(), newSecret()];
    const headers = signatureHeaders({ deliveryId: 'evt_2', generation: 1, eventType: 'lead.created', timestamp: now, body, secrets: [current, previous] });
    expect(headers['X-Service-Signature'].split(',').filter((p) => p.startsWith('v1='))).toHaveLength(2);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) {
      expect(verifyServiceSignature(headers['X-Service-Signature'], body, secret)).toBe(true);
      expect(() => new Webhook(secret).verify(body, lowercase(headers))).not.toThrow();
    }
    const stranger = newSecret();
    expect(verifyServiceSignature(headers['X-Service-Signature'], body, stranger)).toBe(false);
    expect(() => new Webhook(stranger).verify(body, lowercase(headers))).toThrow();
  });

  it('given a tampered body or a stale timestamp, then verification fails', () => {
    const secret = newSecret();
    const headers = signatureHeaders({ deliveryId: 'evt_3', generation: 1, eventType: 'lead.created', timestamp: now, body, secrets: [secret] });
    const tampered = body.replace('Jürgen', 'Jurgen');
    expect(verifyServiceSignature(headers['X-Service-Signature'], tampered, secret)).toBe(false);
    expect(() => new Webhook(secret).verify(tampered, lowercase(headers))).toThrow();
    const stale = signatureHeaders({ deliveryId: 'evt_3', generation: 1, eventType: 'lead.created', timestamp: now - 3600, body, secrets: [secret] });
    expect(verifyServiceSignature(stale['X-Service-Signature'], body, secret)).toBe(false);
    expect(() => new Webhook(secret).verify(body, lowercase(stale))).toThrow();
  });

  it('given another attempt later, then it is signed afresh (new timestamp, new signature, same delivery id)', () => {
    const secret = newSecret();
    const first = signatureHeaders({ deliveryId: 'evt_4', generation: 1, eventType: 'lead.created', timestamp: now, body, secrets: [secret] });
    const retry = signatureHeaders({ deliveryId: 'evt_4', generation: 1, eventType: 'lead.created', timestamp: now + 60, body, secrets: [secret] });
    expect(retry['X-Service-Delivery']).toBe(first['X-Service-Delivery']);
    expect(retry['X-Service-Signature']).not.toBe(first['X-Service-Signature']);
    expect(retry['webhook-signature']).not.toBe(first['webhook-signature']);
  });

  it('given a redelivery, then webhook-id names the generation under the signature and X-Service-Delivery stays the delivery id', () => {
    const secret = newSecret();
    const retry = signatureHeaders({ deliveryId: 'evt_6', generation: 1, eventType: 'pricing.calculated', timestamp: now, body, secrets: [secret] });
    const redelivery = signatureHeaders({ deliveryId: 'evt_6', generation: 2, eventType: 'pricing.calculated', timestamp: now, body, secrets: [secret] });
    expect([retry['webhook-id'], redelivery['webhook-id']]).toEqual(['evt_6', 'evt_6_g2']);
    expect([retry['X-Service-Delivery'], redelivery['X-Service-Delivery']]).toEqual(['evt_6', 'evt_6']);
    expect([retry['X-Service-Delivery-Generation'], redelivery['X-Service-Delivery-Generation']]).toEqual(['1', '2']);
    expect(() => new Webhook(secret).verify(body, lowercase(redelivery))).not.toThrow();
    // A captured attempt replayed as another generation: the id is signed, so it does not verify.
    expect(() => new Webhook(secret).verify(body, lowercase({ ...retry, 'webhook-id': 'evt_6_g2' }))).toThrow();
    expect(() => new Webhook(secret).verify(body, lowercase({ ...redelivery, 'webhook-id': 'evt_6' }))).toThrow();
  });

  it('given no secret, then it refuses to produce unsigned headers', () => {
    expect(() => signatureHeaders({ deliveryId: 'evt_5', generation: 1, eventType: 'lead.created', timestamp: now, body, secrets: [] })).toThrow();
  });
});
