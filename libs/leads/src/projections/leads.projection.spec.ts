import { applyEvent } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import { leadStream, type LeadEvent } from '../domain/lead.events';
import { LEADS, leadsProjection, type LeadDocument } from './leads.projection';

const ORG = 'org_1';
const LEAD = 'lead_1';
const T0 = Date.UTC(2026, 0, 1);

const history: RecordedEvent[] = (
  [
    { type: 'lead.v1.created', data: { organizationId: ORG, leadId: LEAD, name: 'Jane', email: 'jane@example.com', phone: '+31 6 1', message: 'Six windows', createdAt: T0 } },
    { type: 'lead.v1.statusChanged', data: { organizationId: ORG, leadId: LEAD, from: 'new', to: 'contacted', at: T0 + 10 } },
    { type: 'lead.v1.statusChanged', data: { organizationId: ORG, leadId: LEAD, from: 'contacted', to: 'closed', at: T0 + 20 } },
  ] satisfies LeadEvent[]
).map((event, i) => ({ id: `ev-${i}`, streamId: leadStream(LEAD), type: event.type, data: event.data, metadata: {}, revision: i, position: i + 1, recordedAt: T0 }));

describe('leads projection', () => {
  let store: SqliteReadStore;
  beforeEach(() => {
    store = new SqliteReadStore({ file: ':memory:' });
  });
  afterEach(() => store.close());

  const read = () => store.get<LeadDocument>(LEADS, LEAD);

  it('given a created lead, then the document is the api-v1 lead with status new', async () => {
    await applyEvent(store, leadsProjection, history[0]);
    expect(await read()).toEqual({
      id: LEAD, organizationId: ORG, name: 'Jane', email: 'jane@example.com', phone: '+31 6 1', message: 'Six windows', status: 'new', createdAt: T0, updatedAt: T0, _pos: 1,
    });
  });

  it('given each event applied twice, then the document is the same as applied once', async () => {
    for (const event of history) {
      await applyEvent(store, leadsProjection, event);
      const once = await read();
      expect(await applyEvent(store, leadsProjection, event)).toBe(0);
      expect(await read()).toEqual(once);
    }
    expect(await read()).toMatchObject({ status: 'closed', updatedAt: T0 + 20 });
  });

  it('given an old event replayed after newer ones, then it does not move the status back', async () => {
    for (const event of history) await applyEvent(store, leadsProjection, event);
    await applyEvent(store, leadsProjection, history[1]);
    expect(await read()).toMatchObject({ status: 'closed' });
  });
});
