import { applyEvent } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import { configHash, priceConfiguration, validateConfiguration, validateTemplate } from '@lib/templates';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import type { SessionEvent } from '../domain/session.events';
import { toSessionObject } from '../application/session-reader';
import { SESSIONS, sessionsProjection, type SessionDocument } from './sessions.projection';

const template = validateTemplate(exampleTemplateBody()).template!;
const configuration = validateConfiguration(template, exampleConfigurationInput()).configuration!;
const hash = configHash(configuration);
const pricing = priceConfiguration(template, 'tpl_1', configuration, 'EUR');
const ids = { organizationId: 'org_a', sessionId: 'ses_1' };

const events: SessionEvent[] = [
  { type: 'session.v1.started', data: { ...ids, templateId: 'tpl_1', origin: 'embed', locale: 'de', customerTokenHash: 'ab'.repeat(32), at: 1_000 } },
  {
    type: 'session.v1.configurationChanged',
    data: { ...ids, templateId: 'tpl_1', locale: 'de', configuration, configHash: hash, previousConfigHash: null, basePricing: pricing, at: 2_000 },
  },
  { type: 'session.v1.adjustmentReceived', data: { ...ids, configHash: hash, lineItems: [], subtotal: 0, at: 2_500 } },
  {
    type: 'session.v1.submitted',
    data: {
      ...ids,
      templateId: 'tpl_1',
      submissionId: 'sub_1',
      customer: { name: 'Ada', email: 'ada@example.com', phone: null, companyName: null, address: null, postalCode: null, city: null, country: null },
      configuration,
      configHash: hash,
      basePricing: pricing,
      externalPricing: { configHash: hash, lineItems: [], subtotal: 0, receivedAt: 2_500 },
      at: 3_000,
    },
  },
];

const recorded = (event: SessionEvent, position: number): RecordedEvent => ({
  id: `e${position}`, streamId: 'session-ses_1', type: event.type, data: event.data, metadata: {}, revision: position - 1, position, recordedAt: position,
});

describe('sessions projection', () => {
  let store: SqliteReadStore;
  beforeEach(() => (store = new SqliteReadStore({ file: ':memory:' })));
  afterEach(() => store.close());

  it('given a session through its life, then the document follows it; adjustments do not move lastActivityAt', async () => {
    for (const [i, event] of events.slice(0, 3).entries()) await applyEvent(store, sessionsProjection, recorded(event, i + 1));
    expect(await store.get<SessionDocument>(SESSIONS, 'ses_1')).toMatchObject({
      status: 'active', configHash: hash, configuredAt: 2_000, basePricing: pricing,
      adjustments: [{ configHash: hash, lineItems: [], subtotal: 0, receivedAt: 2_500 }], lastActivityAt: 2_000, updatedAt: 2_500,
    });
    await applyEvent(store, sessionsProjection, recorded(events[3], 4));
    expect(await store.get<SessionDocument>(SESSIONS, 'ses_1')).toMatchObject({ status: 'submitted', submissionId: 'sub_1', lastActivityAt: 3_000 });
  });

  it('given a configuration priced, another one priced, and the first one again, then the session shows the first answer', async () => {
    const configured = (configHash: string, previousConfigHash: string | null, at: number): SessionEvent => ({
      type: 'session.v1.configurationChanged',
      data: { ...ids, templateId: 'tpl_1', locale: 'de', configuration, configHash, previousConfigHash, basePricing: pricing, at },
    });
    const adjusted = (configHash: string, subtotal: number, at: number): SessionEvent => ({
      type: 'session.v1.adjustmentReceived',
      data: { ...ids, configHash, lineItems: [{ description: 'All in', quantity: 1, unitPrice: subtotal, total: subtotal, itemType: 'other' }], subtotal, at },
    });
    const other = 'sha256:other';
    const history = [events[0], configured(hash, null, 2_000), adjusted(hash, 700, 2_100), configured(other, hash, 2_200), adjusted(other, 800, 2_300), configured(hash, other, 2_400)];
    for (const [i, event] of history.entries()) await applyEvent(store, sessionsProjection, recorded(event, i + 1));
    const session = (await store.get<SessionDocument>(SESSIONS, 'ses_1'))!;
    expect(toSessionObject(session, { now: 2_500, idleTtlMs: 60_000 }).adjustments).toEqual({
      configHash: hash, subtotal: 700, receivedAt: 2_100, lineItems: [{ description: 'All in', quantity: 1, unitPrice: 700, total: 700, itemType: 'other' }],
    });
  });

  it('given every event applied twice, then the document is the same as after applying each once', async () => {
    for (const [i, event] of events.entries()) await applyEvent(store, sessionsProjection, recorded(event, i + 1));
    const once = await store.get(SESSIONS, 'ses_1');
    for (const [i, event] of events.entries()) expect(await applyEvent(store, sessionsProjection, recorded(event, i + 1))).toBe(0);
    expect(await store.get(SESSIONS, 'ses_1')).toEqual(once);
  });
});
