import { applyEvent } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import type { SessionEvent } from '@lib/sessions';
import { PRICING_DELIVERIES, PRICING_GRANTS, pricingGrantsProjection } from './pricing-grants.projection';

const issued = (tokenHash: string, generation: number, deliveryId = 'evt_1'): SessionEvent => ({
  type: 'session.v1.pricingTokenIssued',
  data: {
    organizationId: 'org_a', sessionId: 'ses_1', tokenHash, configHash: 'sha256:aa', context: 'configuration', submissionId: null,
    deliveryId, generation, issuedAt: 1_000 * generation, expiresAt: 1_000 * generation + 600_000,
  },
});
const recorded = (event: SessionEvent, position: number): RecordedEvent => ({
  id: `e${position}`, streamId: 'session-ses_1', type: event.type, data: event.data, metadata: {}, revision: position, position, recordedAt: position,
});

describe('pricing grants projection', () => {
  let store: SqliteReadStore;
  beforeEach(() => (store = new SqliteReadStore({ file: ':memory:' })));
  afterEach(() => store.close());

  it('given a token issued, then its grant is found by the token hash, and its delivery names the generation', async () => {
    await applyEvent(store, pricingGrantsProjection, recorded(issued('hash1', 1), 1));
    expect(await store.get(PRICING_GRANTS, 'hash1')).toMatchObject({ sessionId: 'ses_1', configHash: 'sha256:aa', deliveryId: 'evt_1', generation: 1, expiresAt: 601_000 });
    expect(await store.get(PRICING_DELIVERIES, 'evt_1')).toMatchObject({ generation: 1 });
  });

  it('given a redelivery, then the delivery moves to the new generation and the old grant is superseded; other deliveries are untouched', async () => {
    const events = [issued('hash1', 1), issued('other', 1, 'evt_2'), issued('hash2', 2)];
    for (const [i, event] of events.entries()) await applyEvent(store, pricingGrantsProjection, recorded(event, i + 1));
    expect(await store.get(PRICING_DELIVERIES, 'evt_1')).toMatchObject({ generation: 2 });
    expect(await store.get(PRICING_DELIVERIES, 'evt_2')).toMatchObject({ generation: 1 });
    expect(await store.get(PRICING_GRANTS, 'hash1')).toMatchObject({ generation: 1 });
  });

  it('given the events replayed, then nothing changes (an old generation never comes back)', async () => {
    const events = [issued('hash1', 1), issued('hash2', 2)];
    for (const [i, event] of events.entries()) await applyEvent(store, pricingGrantsProjection, recorded(event, i + 1));
    for (const [i, event] of events.entries()) expect(await applyEvent(store, pricingGrantsProjection, recorded(event, i + 1))).toBe(0);
    expect(await store.get(PRICING_DELIVERIES, 'evt_1')).toMatchObject({ generation: 2 });
  });
});
