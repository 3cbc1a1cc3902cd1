import { collectionName, type Projection, type ProjectedDocument } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import { SESSION_STREAM, type PricingTokenGrant, type SessionEvent } from '@lib/sessions';

/** What a capability token grants, found by the token's SHA-256 (never by the token). */
export interface PricingGrantDocument extends ProjectedDocument, Omit<PricingTokenGrant, 'tokenHash'> {
  /** the token's SHA-256 (hex) */
  id: string;
  organizationId: string;
  sessionId: string;
}

/** The newest token generation of a webhook delivery: every older one is superseded (decisions §8). */
export interface PricingDeliveryDocument extends ProjectedDocument {
  /** the delivery id */
  id: string;
  generation: number;
}

/** Looks capability tokens up for the configuration-session endpoints. */
export const pricingGrantsProjection: Projection = {
  name: 'pricing-grants',
  version: 1,
  // Collection names are global to the read store: prefixed so they never meet another library's.
  collections: { pricing_grants: [], pricing_deliveries: [] },
  filter: { streamPrefixes: [SESSION_STREAM], eventTypePrefixes: ['session.v1.pricingTokenIssued'] },
  async handle(recorded: RecordedEvent, context) {
    const event = recorded as unknown as SessionEvent;
    if (event.type !== 'session.v1.pricingTokenIssued') return;
    const { tokenHash, ...grant } = event.data;
    context.put('pricing_grants', { id: tokenHash, ...grant } satisfies PricingGrantDocument);
    const delivery = await context.get<PricingDeliveryDocument>('pricing_deliveries', grant.deliveryId);
    if (!delivery || delivery.generation < grant.generation) {
      context.put('pricing_deliveries', { id: grant.deliveryId, generation: grant.generation } satisfies PricingDeliveryDocument);
    }
  },
};

export const PRICING_GRANTS = collectionName(pricingGrantsProjection, 'pricing_grants');
export const PRICING_DELIVERIES = collectionName(pricingGrantsProjection, 'pricing_deliveries');
