import { createHash } from 'node:crypto';
import { domainToUnicode } from 'node:url';
import { isEmail } from 'class-validator';

/** The fields of a contact other than its e-mail (the upsert key) and its bookkeeping. */
export interface ContactDetails {
  name: string;
  phone: string | null;
  companyName: string | null;
  address: string | null;
  postalCode: string | null;
  city: string | null;
  country: string | null;
  externalRef: string | null;
}

export const CONTACT_DETAIL_FIELDS = ['name', 'phone', 'companyName', 'address', 'postalCode', 'city', 'country', 'externalRef'] as const satisfies ReadonlyArray<keyof ContactDetails>;

/** What POST /contacts may set besides the e-mail (api-v1). */
export type ContactUpsertFields = Partial<Pick<ContactDetails, 'name' | 'phone' | 'companyName' | 'externalRef'>>;

/** What PATCH /contacts/{id} may change; null clears a field (never the name). */
export type ContactChanges = Partial<ContactDetails>;

/** The customer of a submission (besides the e-mail) as the sessions library hands it over; any field may be null. */
export type SubmissionCustomerDetails = { [F in (typeof CUSTOMER_FIELDS)[number]]: string | null };

/** The customer fields a submission may fill in on its contact. */
export const CUSTOMER_FIELDS = ['name', 'phone', 'companyName', 'address', 'postalCode', 'city', 'country'] as const satisfies ReadonlyArray<keyof ContactDetails>;

export type ContactEvent =
  | {
      type: 'contact.v1.created';
      data: { organizationId: string; contactId: string; email: string; details: ContactDetails; at: number };
    }
  | {
      type: 'contact.v1.detailsChanged';
      /** only the fields whose value changed; null means the field was cleared */
      data: { organizationId: string; contactId: string; changes: ContactChanges; at: number };
    }
  | {
      type: 'contact.v1.submissionRecorded';
      data: { organizationId: string; contactId: string; submissionId: string; at: number };
    };

export const CONTACT_STREAM = 'contact-';

/**
 * E-mail addresses are compared and stored in one form for each mailbox: trimmed, in Unicode
 * normalization form C, lower-cased, the domain as IDNA gives it in Unicode (so `xn--bcher-kva.de`
 * and `BÜCHER.de` are `bücher.de`). The same address typed composed or decomposed, or with its
 * domain in punycode, is one contact. Lower-cased before IDNA, as the form of before 2026-11-28
 * was: IDNA maps a capital ẞ to "ss" where lower-casing gives ß (a review found `MAX@STRAẞE.DE`
 * keyed as `strasse.de`). Where IDNA's or NFC's compatibility mappings would make an address the
 * API refuses as input (`⁽` becomes `(`, U+037E becomes `;`), the address keeps the form of before.
 */
export function normalizeEmail(email: string): string {
  const lowered = email.trim().normalize('NFC').toLowerCase();
  const at = lowered.lastIndexOf('@');
  if (at < 0) return lowered;
  const domain = lowered.slice(at + 1);
  // '' for a domain IDNA refuses: it is then kept as it is.
  const normalized = `${lowered.slice(0, at + 1)}${(domainToUnicode(domain) || domain).toLowerCase()}`;
  return isEmail(normalized, {}) ? normalized : legacyNormalizedEmail(email);
}

/**
 * The form e-mails were keyed and stored in until 2026-11-28: trimmed and lower-cased only. A
 * contact created then under an address that normalizeEmail now writes otherwise keeps this key.
 */
export function legacyNormalizedEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The form of before 2026-11-28 under which the e-mail's contact may have been created, when it
 * is one no address is normalized to now; else null (it is the normalized form, or the normalized
 * form of another address, whose contact is not this one's). `normalized`: the e-mail's, when the
 * caller has it already.
 */
export function legacyFormOf(email: string, normalized = normalizeEmail(email)): string | null {
  const legacy = legacyNormalizedEmail(email);
  return legacy !== normalized && normalizeEmail(legacy) !== legacy ? legacy : null;
}

/**
 * The contact's key: a hash of its organization and its e-mail as stored (normalized). Parallel
 * upserts of one e-mail therefore meet on the same stream, where the expected-revision check lets
 * exactly one create win, without any global lock. The organization is part of the hash so the
 * same e-mail in two organizations gives two unrelated ids.
 */
export function contactKey(organizationId: string, normalizedEmail: string): string {
  return createHash('sha256').update(`${organizationId}\n${normalizedEmail}`).digest('hex').slice(0, 32);
}

const CONTACT_ID = /^ct_([0-9a-f]{32})$/;

export const contactIdOf = (key: string) => `ct_${key}`;

/** The key inside a contact id, or null when the string cannot be a contact id. */
export function keyOfContactId(contactId: string): string | null {
  return CONTACT_ID.exec(contactId)?.[1] ?? null;
}

export const contactStream = (organizationId: string, key: string) => `${CONTACT_STREAM}${organizationId}-${key}`;
