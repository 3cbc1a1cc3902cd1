import { collectionName, type Projection, type ProjectedDocument } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import { CONTACT_STREAM, type ContactDetails, type ContactEvent } from '../domain/contact.events';

/** One document per contact: the api-v1 Contact plus its organization. */
export interface ContactDocument extends ProjectedDocument, ContactDetails {
  id: string;
  organizationId: string;
  email: string;
  isStarred: boolean;
  submissionCount: number;
  lastUsedAt: number;
  createdAt: number;
  updatedAt: number;
}

export const contactsProjection: Projection = {
  name: 'contacts',
  version: 1,
  collections: {
    // GET /contacts (newest first) and GET /contacts?email= (exact match)
    contacts: [
      { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }] },
      { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'email', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }] },
    ],
  },
  filter: { streamPrefixes: [CONTACT_STREAM] },
  async handle(recorded: RecordedEvent, context) {
    const event = recorded as unknown as ContactEvent;
    if (event.type === 'contact.v1.created') {
      const { organizationId, contactId, email, details, at } = event.data;
      context.put('contacts', {
        id: contactId,
        organizationId,
        email,
        ...details,
        isStarred: false,
        submissionCount: 0,
        // A contact counts as used when it is created; submissions move it on.
        lastUsedAt: at,
        createdAt: at,
        updatedAt: at,
      } satisfies ContactDocument);
      return;
    }
    const contact = await context.get<ContactDocument>('contacts', event.data.contactId);
    if (!contact) return;
    switch (event.type) {
      case 'contact.v1.detailsChanged':
        context.put('contacts', { ...contact, ...event.data.changes, updatedAt: event.data.at });
        return;
      case 'contact.v1.submissionRecorded':
        context.put('contacts', {
          ...contact,
          submissionCount: contact.submissionCount + 1,
          lastUsedAt: Math.max(contact.lastUsedAt, event.data.at),
          updatedAt: event.data.at,
        });
        return;
    }
  },
};

export const CONTACTS = collectionName(contactsProjection, 'contacts');
