import { NotFound } from '@lib/shared';

/** Unknown contact, or a contact of another organization (never 403). */
export class ContactNotFound extends NotFound {
  constructor() {
    super('Contact');
  }
}
