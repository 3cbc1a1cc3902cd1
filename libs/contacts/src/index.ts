export * from './application/record-submission-contact.command';
export * from './domain/contact.events';
export * from './domain/contact.decider';
export * from './domain/contact.errors';
export * from './application/contact.commands';
export * from './application/contact-directory';
export * from './projections/contacts.projection';
export * from './contacts.module';
