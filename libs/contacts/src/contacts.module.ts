import { Module } from '@nestjs/common';
import { ProjectionRegistry } from '@lib/runtime';
import { ChangeContactHandler, UpsertContactHandler } from './application/contact.commands';
import { ContactDirectory } from './application/contact-directory';
import { ContactWriter } from './application/contact-writes';
import { RecordSubmissionContactHandler } from './application/record-submission-contact.handler';
import { ContactsController } from './http/contacts.controller';
import { contactsProjection } from './projections/contacts.projection';

@Module({
  controllers: [ContactsController],
  providers: [ContactWriter, ContactDirectory, UpsertContactHandler, ChangeContactHandler, RecordSubmissionContactHandler],
  exports: [ContactDirectory],
})
export class ContactsModule {
  constructor(registry: ProjectionRegistry) {
    registry.register(contactsProjection);
  }
}
