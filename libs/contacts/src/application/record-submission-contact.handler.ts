import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock, firstCharacters, stripHtml } from '@lib/shared';
import { contactIdOf, contactStream, CUSTOMER_FIELDS, type SubmissionCustomerDetails } from '../domain/contact.events';
import { CONTACT_FIELD_LIMITS } from '../domain/contact.limits';
import { ContactWriter } from './contact-writes';
import { RecordSubmissionContact } from './record-submission-contact.command';

/**
 * Keeps the organization's contacts in step with its submissions: the customer's contact is
 * created or its empty fields filled, and the submission is counted once, however often the
 * command is dispatched for it. Returns the contact id, or null for a customer without e-mail.
 */
@CommandHandler(RecordSubmissionContact)
export class RecordSubmissionContactHandler implements ICommandHandler<RecordSubmissionContact, string | null> {
  constructor(
    private readonly writer: ContactWriter,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, submissionId, customer, actor }: RecordSubmissionContact): Promise<string | null> {
    if (customer.email === null || customer.email.trim() === '') return null;
    const { key, email } = await this.writer.locate(organizationId, customer.email);
    const contactId = contactIdOf(key);
    await this.writer.run(
      contactStream(organizationId, key),
      { type: 'recordSubmission', organizationId, contactId, email, submissionId, customer: cleanCustomer(customer), at: this.clock.now() },
      actor,
    );
    return contactId;
  }
}

/** The customer as contact fields: plain text, within the contact's limits, blank as null. */
function cleanCustomer(customer: RecordSubmissionContact['customer']): SubmissionCustomerDetails {
  const clean = {} as SubmissionCustomerDetails;
  for (const field of CUSTOMER_FIELDS) {
    const value = customer[field];
    const text = typeof value === 'string' ? firstCharacters(stripHtml(value), CONTACT_FIELD_LIMITS[field]).trim() : '';
    clean[field] = text === '' ? null : text;
  }
  return clean;
}
