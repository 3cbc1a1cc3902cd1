import { applyEvent } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import { contactIdOf, contactKey, contactStream, type ContactEvent } from '../domain/contact.events';
import { CONTACTS, contactsProjection, type ContactDocument } from './contacts.projection';

const ORG = 'org_1';
const KEY = contactKey(ORG, 'jane@example.com');
const ID = contactIdOf(KEY);
const T0 = Date.UTC(2026, 0, 1);

let position = 0;
function recorded(event: ContactEvent): RecordedEvent {
  position += 1;
  return { id: `ev-${position}`, streamId: contactStream(ORG, KEY), type: event.type, data: event.data, metadata: {}, revision: position - 1, position, recordedAt: T0 };
}

const history = (): RecordedEvent[] => {
  position = 0;
  return [
    recorded({
      type: 'contact.v1.created',
      data: {
        organizationId: ORG,
        contactId: ID,
        email: 'jane@example.com',
        details: { name: 'Jane', phone: null, companyName: null, address: null, postalCode: null, city: null, country: null, externalRef: null },
        at: T0,
      },
    }),
    recorded({ type: 'contact.v1.detailsChanged', data: { organizationId: ORG, contactId: ID, changes: { phone: '123', externalRef: 'crm:c:1' }, at: T0 + 10 } }),
    recorded({ type: 'contact.v1.submissionRecorded', data: { organizationId: ORG, contactId: ID, submissionId: 'sub_1', at: T0 + 20 } }),
    recorded({ type: 'contact.v1.detailsChanged', data: { organizationId: ORG, contactId: ID, changes: { phone: null }, at: T0 + 30 } }),
  ];
};

describe('contacts projection', () => {
  let store: SqliteReadStore;
  beforeEach(() => {
    store = new SqliteReadStore({ file: ':memory:' });
  });
  afterEach(() => store.close());

  const read = () => store.get<ContactDocument>(CONTACTS, ID);

  it('given the history of a contact, then the document is the api-v1 contact', async () => {
    for (const event of history()) await applyEvent(store, contactsProjection, event);
    expect(await read()).toEqual({
      id: ID,
      organizationId: ORG,
      email: 'jane@example.com',
      name: 'Jane',
      phone: null,
      companyName: null,
      address: null,
      postalCode: null,
      city: null,
      country: null,
      externalRef: 'crm:c:1',
      isStarred: false,
      submissionCount: 1,
      lastUsedAt: T0 + 20,
      createdAt: T0,
      updatedAt: T0 + 30,
      _pos: 4,
    });
  });

  it('given each event applied twice in a row, then the document is the same as applied once', async () => {
    const events = history();
    for (const event of events) await applyEvent(store, contactsProjection, event);
    const once = await read();

    await store.close();
    store = new SqliteReadStore({ file: ':memory:' });
    for (const event of events) {
      await applyEvent(store, contactsProjection, event);
      expect(await applyEvent(store, contactsProjection, event)).toBe(0);
    }
    expect(await read()).toEqual(once);
  });

  it('given the whole history replayed, then nothing changes (a submission is not counted twice)', async () => {
    const events = history();
    for (const event of events) await applyEvent(store, contactsProjection, event);
    const once = await read();
    for (const event of events) await applyEvent(store, contactsProjection, event);
    expect(await read()).toEqual(once);
    expect(once!.submissionCount).toBe(1);
  });
});
