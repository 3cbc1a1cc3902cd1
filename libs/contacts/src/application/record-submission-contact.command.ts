/**
 * Creates or updates the contact of a submission's customer (keyed by case-insensitive e-mail)
 * and counts the submission. Dispatched by the sessions library on submit; a customer without
 * an e-mail creates no contact.
 */
export class RecordSubmissionContact {
  constructor(
    readonly organizationId: string,
    readonly submissionId: string,
    readonly customer: {
      name: string | null;
      email: string | null;
      phone: string | null;
      companyName: string | null;
      address: string | null;
      postalCode: string | null;
      city: string | null;
      country: string | null;
    },
    readonly actor: string,
  ) {}
}
