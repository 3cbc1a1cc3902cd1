import { Injectable } from '@nestjs/common';
import { decodeCursor, encodeCursor, type Page } from '@lib/http';
import { ReadStore, type Filter } from '@lib/read-store';
import { ContactNotFound } from '../domain/contact.errors';
import { legacyFormOf, normalizeEmail } from '../domain/contact.events';
import { CONTACTS, type ContactDocument } from '../projections/contacts.projection';

/** The api-v1 Contact. */
export interface Contact {
  id: string;
  name: string;
  email: string;
  phone: string | null;
  companyName: string | null;
  address: string | null;
  postalCode: string | null;
  city: string | null;
  country: string | null;
  isStarred: boolean;
  submissionCount: number;
  externalRef: string | null;
  lastUsedAt: number;
  createdAt: number;
  updatedAt: number;
}

export function toContact(doc: ContactDocument): Contact {
  return {
    id: doc.id,
    name: doc.name,
    email: doc.email,
    phone: doc.phone,
    companyName: doc.companyName,
    address: doc.address,
    postalCode: doc.postalCode,
    city: doc.city,
    country: doc.country,
    isStarred: doc.isStarred,
    submissionCount: doc.submissionCount,
    externalRef: doc.externalRef,
    lastUsedAt: doc.lastUsedAt,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

export interface ContactListOptions {
  email?: string;
  limit: number;
  cursor?: string;
}

const LIST = 'contacts';
const NEWEST_FIRST = [
  { field: 'createdAt', direction: 'desc' as const },
  { field: 'id', direction: 'desc' as const },
];

/** Read access to contacts, always scoped to one organization. */
@Injectable()
export class ContactDirectory {
  constructor(private readonly reads: ReadStore) {}

  async find(organizationId: string, contactId: string): Promise<Contact | null> {
    const doc = await this.reads.get<ContactDocument>(CONTACTS, contactId);
    return doc && doc.organizationId === organizationId ? toContact(doc) : null;
  }

  /** Another organization's contact is not found, never forbidden. */
  async get(organizationId: string, contactId: string): Promise<Contact> {
    const contact = await this.find(organizationId, contactId);
    if (!contact) throw new ContactNotFound();
    return contact;
  }

  /** Newest first, keyset-paged. */
  async list(organizationId: string, options: ContactListOptions): Promise<Page<Contact>> {
    const filter: Filter = { organizationId };
    let email: string | undefined;
    if (options.email !== undefined) {
      email = normalizeEmail(options.email);
      // The contact an upsert of this e-mail updates (ContactWriter.locate): one created before
      // 2026-11-28 under the form of then, if there is one, else the one of the normalized form.
      const legacy = legacyFormOf(options.email, email);
      if (legacy !== null && (await this.reads.count(CONTACTS, { organizationId, email: legacy })) > 0) email = legacy;
      filter.email = email;
    }
    const listed = { email };
    const after = decodeCursor(LIST, options.cursor, listed);
    const { items, nextAfter } = await this.reads.find<ContactDocument>(CONTACTS, { filter, sort: NEWEST_FIRST, limit: options.limit, after });
    return { data: items.map(toContact), nextCursor: nextAfter ? encodeCursor(LIST, nextAfter, listed) : null };
  }
}
