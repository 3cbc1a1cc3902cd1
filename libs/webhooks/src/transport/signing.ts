import { createHmac } from 'node:crypto';
import { GENERATION_HEADER, standardWebhookId } from '../domain/delivery';

const SECRET_PREFIX = 'whsec_';

/** The key Standard Webhooks prescribes: the base64-decoded bytes after `whsec_`. */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

export interface SignatureInput {
  /** the delivery record id (X-Service-Delivery, the same on every generation) */
  deliveryId: string;
  /** the delivery's generation (X-Service-Delivery-Generation, and part of `webhook-id` from 2 on) */
  generation: number;
  eventType: string;
  /** Unix seconds of this attempt */
  timestamp: number;
  /** the exact bytes sent */
  body: string;
  /** every live secret, current first */
  secrets: string[];
}

/**
 * The headers of one attempt (decisions §9), signed afresh for every attempt:
 * `X-Service-Signature: t=<t>,v1=<hex>[,v1=<hex>]` with HMAC-SHA256 keyed by the secret string as
 * issued (`whsec_…`) over `<t>.<body>`, and the Standard Webhooks trio, whose signature is keyed
 * by the decoded secret bytes over `<webhook-id>.<webhook-timestamp>.<body>`. One signature per
 * live secret, so a receiver holding either secret verifies during a rotation. `webhook-id` names
 * the generation from the first redelivery on (standardWebhookId), which puts it under the
 * signature; `X-Service-Delivery` stays the delivery id.
 */
export function signatureHeaders(input: SignatureInput): Record<string, string> {
  if (input.secrets.length === 0) throw new Error('at least one signing secret is required');
  const t = String(input.timestamp);
  const webhookId = standardWebhookId(input.deliveryId, input.generation);
  const service = input.secrets.map((secret) => `v1=${createHmac('sha256', secret).update(`${t}.${input.body}`).digest('hex')}`);
  const standard = input.secrets.map(
    (secret) => `v1,${createHmac('sha256', standardWebhooksKey(secret)).update(`${webhookId}.${t}.${input.body}`).digest('base64')}`,
  );
  return {
    'X-Service-Event': input.eventType,
    'X-Service-Delivery': input.deliveryId,
    [GENERATION_HEADER]: String(input.generation),
    'X-Service-Signature': [`t=${t}`, ...service].join(','),
    'webhook-id': webhookId,
    'webhook-timestamp': t,
    'webhook-signature': standard.join(' '),
  };
}
