import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '@lib/shared';
import { ContactNotFound } from '../domain/contact.errors';
import { contactIdOf, contactStream, keyOfContactId, type ContactChanges, type ContactUpsertFields } from '../domain/contact.events';
import { ContactDirectory, type Contact } from './contact-directory';
import { ContactWriter } from './contact-writes';

/** POST /contacts: create the contact of this e-mail, or update the one that exists. */
export class UpsertContact {
  constructor(
    readonly organizationId: string,
    readonly email: string,
    readonly fields: ContactUpsertFields,
    readonly actor: string,
  ) {}
}

export interface UpsertedContact {
  contact: Contact;
  created: boolean;
}

@CommandHandler(UpsertContact)
export class UpsertContactHandler implements ICommandHandler<UpsertContact, UpsertedContact> {
  constructor(
    private readonly writer: ContactWriter,
    private readonly directory: ContactDirectory,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, email, fields, actor }: UpsertContact): Promise<UpsertedContact> {
    const { key, email: stored } = await this.writer.locate(organizationId, email);
    const contactId = contactIdOf(key);
    // Stored, not visible yet: the answer kept under an Idempotency-Key names the contact, as it does a quote or a lead.
    const result = await this.writer.run(
      contactStream(organizationId, key),
      { type: 'upsertContact', organizationId, contactId, email: stored, fields, at: this.clock.now() },
      actor,
      { contactId },
    );
    return {
      contact: await this.directory.get(organizationId, contactId),
      created: result.newEvents.some((event) => event.type === 'contact.v1.created'),
    };
  }
}

/** PATCH /contacts/{id}. */
export class ChangeContact {
  constructor(
    readonly organizationId: string,
    readonly contactId: string,
    readonly changes: ContactChanges,
    readonly actor: string,
  ) {}
}

@CommandHandler(ChangeContact)
export class ChangeContactHandler implements ICommandHandler<ChangeContact, Contact> {
  constructor(
    private readonly writer: ContactWriter,
    private readonly directory: ContactDirectory,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, contactId, changes, actor }: ChangeContact): Promise<Contact> {
    const key = keyOfContactId(contactId);
    if (!key) throw new ContactNotFound();
    // The stream is under the caller's organization: another organization's id finds nothing.
    await this.writer.run(contactStream(organizationId, key), { type: 'changeContact', changes, at: this.clock.now() }, actor);
    return this.directory.get(organizationId, contactId);
  }
}
