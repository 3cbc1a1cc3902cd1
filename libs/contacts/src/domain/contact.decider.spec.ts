import { fold } from '@lib/event-sourcing';
import { contactDecider, type ContactCommand } from './contact.decider';
import { ContactNotFound } from './contact.errors';
import { contactIdOf, contactKey, legacyFormOf, normalizeEmail, type ContactDetails, type ContactEvent, type ContactUpsertFields, type SubmissionCustomerDetails } from './contact.events';

const ORG = 'org_1';
const EMAIL = 'jane@example.com';
const CONTACT = contactIdOf(contactKey(ORG, EMAIL));
const T0 = Date.UTC(2026, 0, 1);
const T1 = T0 + 60_000;

/** given events, when a command, then these events (or this error). */
function given(...history: ContactEvent[]) {
  const state = fold(contactDecider, history);
  return {
    when: (command: ContactCommand) => ({
      then: (...expected: ContactEvent[]) => expect(contactDecider.decide(command, state)).toEqual(expected),
      thenThrows: (error: new (...args: never[]) => Error) => expect(() => contactDecider.decide(command, state)).toThrow(error),
    }),
  };
}

const details = (overrides: Partial<ContactDetails> = {}): ContactDetails => ({
  name: '',
  phone: null,
  companyName: null,
  address: null,
  postalCode: null,
  city: null,
  country: null,
  externalRef: null,
  ...overrides,
});

const customer = (overrides: Partial<SubmissionCustomerDetails> = {}): SubmissionCustomerDetails => ({
  name: null,
  phone: null,
  companyName: null,
  address: null,
  postalCode: null,
  city: null,
  country: null,
  ...overrides,
});

const created = (overrides: Partial<ContactDetails> = {}, at = T0): ContactEvent => ({
  type: 'contact.v1.created',
  data: { organizationId: ORG, contactId: CONTACT, email: EMAIL, details: details(overrides), at },
});

const upsert = (fields: ContactUpsertFields, at = T1): ContactCommand => ({
  type: 'upsertContact',
  organizationId: ORG,
  contactId: CONTACT,
  email: EMAIL,
  fields,
  at,
});

const recordSubmission = (submissionId: string, fromCustomer: Partial<SubmissionCustomerDetails>, at = T1): ContactCommand => ({
  type: 'recordSubmission',
  organizationId: ORG,
  contactId: CONTACT,
  email: EMAIL,
  submissionId,
  customer: customer(fromCustomer),
  at,
});

const recorded = (submissionId: string, at = T1): ContactEvent => ({
  type: 'contact.v1.submissionRecorded',
  data: { organizationId: ORG, contactId: CONTACT, submissionId, at },
});

describe('contact decider', () => {
  describe('upsert by e-mail', () => {
    it('given no contact, when upserted, then it is created with the given fields and the rest empty', () => {
      given()
        .when(upsert({ name: 'Jane Doe', phone: '+31 6 1234', companyName: null }, T0))
        .then(created({ name: 'Jane Doe', phone: '+31 6 1234' }));
    });

    it('given no contact, when upserted with the e-mail only, then the name is empty', () => {
      given().when(upsert({}, T0)).then(created());
    });

    it('given a contact, when upserted with other values, then only the changed fields are recorded', () => {
      given(created({ name: 'Jane Doe', phone: '+31 6 1234' }))
        .when(upsert({ name: 'Jane Doe', phone: '+31 6 9999', externalRef: 'crm:contact:7' }))
        .then({
          type: 'contact.v1.detailsChanged',
          data: { organizationId: ORG, contactId: CONTACT, changes: { phone: '+31 6 9999', externalRef: 'crm:contact:7' }, at: T1 },
        });
    });

    it('given a contact, when upserted with the same values again, then nothing happens (idempotent)', () => {
      given(created({ name: 'Jane Doe', phone: '+31 6 1234' }))
        .when(upsert({ name: 'Jane Doe', phone: '+31 6 1234' }))
        .then();
    });

    it('given a contact, when upserted with null, then that field is cleared', () => {
      given(created({ name: 'Jane Doe', companyName: 'Acme' }))
        .when(upsert({ companyName: null }))
        .then({ type: 'contact.v1.detailsChanged', data: { organizationId: ORG, contactId: CONTACT, changes: { companyName: null }, at: T1 } });
    });
  });

  describe('change', () => {
    it('given no contact, when changed, then it is not found', () => {
      given().when({ type: 'changeContact', changes: { name: 'X' }, at: T1 }).thenThrows(ContactNotFound);
    });

    it('given a contact, when its address is changed and its phone cleared, then both are recorded', () => {
      given(created({ name: 'Jane', phone: '123' }))
        .when({ type: 'changeContact', changes: { address: 'Main St 1', city: 'Utrecht', phone: null }, at: T1 })
        .then({
          type: 'contact.v1.detailsChanged',
          data: { organizationId: ORG, contactId: CONTACT, changes: { address: 'Main St 1', city: 'Utrecht', phone: null }, at: T1 },
        });
    });

    it('given a contact, when changed to the values it already has, then nothing happens', () => {
      given(created({ name: 'Jane', city: 'Utrecht' }))
        .when({ type: 'changeContact', changes: { name: 'Jane', city: 'Utrecht' }, at: T1 })
        .then();
    });
  });

  describe('record a submission', () => {
    it('given no contact, when a submission is recorded, then the contact is created from the customer and the submission counted', () => {
      given()
        .when(recordSubmission('sub_1', { name: 'Jane', phone: '123', city: 'Delft' }, T0))
        .then(created({ name: 'Jane', phone: '123', city: 'Delft' }), recorded('sub_1', T0));
    });

    it('given a contact, when a submission is recorded, then only empty fields are filled and the submission counted', () => {
      given(created({ name: 'Jane Doe', phone: '123' }))
        .when(recordSubmission('sub_1', { name: 'J. Doe', phone: '999', companyName: 'Acme', city: '  ' }))
        .then(
          { type: 'contact.v1.detailsChanged', data: { organizationId: ORG, contactId: CONTACT, changes: { companyName: 'Acme' }, at: T1 } },
          recorded('sub_1'),
        );
    });

    it('given a contact without a name, when a submission with a name is recorded, then the name is filled', () => {
      given(created())
        .when(recordSubmission('sub_1', { name: 'Jane' }))
        .then({ type: 'contact.v1.detailsChanged', data: { organizationId: ORG, contactId: CONTACT, changes: { name: 'Jane' }, at: T1 } }, recorded('sub_1'));
    });

    it('given a contact that knows everything, when a submission is recorded, then only the count moves', () => {
      given(created({ name: 'Jane', phone: '1' }))
        .when(recordSubmission('sub_2', { name: 'Jane' }))
        .then(recorded('sub_2'));
    });

    it('given a submission already recorded, when it is recorded again, then nothing happens', () => {
      given(created({ name: 'Jane' }), recorded('sub_1'))
        .when(recordSubmission('sub_1', { name: 'Jane', phone: '555' }))
        .then();
    });

    it('given one submission recorded, when another is recorded, then it counts too', () => {
      given(created({ name: 'Jane' }), recorded('sub_1')).when(recordSubmission('sub_2', {})).then(recorded('sub_2'));
    });
  });

  describe('contact keys', () => {
    it('normalizes the e-mail: letter case and surrounding spaces do not matter', () => {
      expect(normalizeEmail('  Jane@Example.COM ')).toBe(EMAIL);
    });

    it.each([
      ['composed and decomposed', 'jos\u00e9@b\u00fccher.de', 'jose\u0301@bu\u0308cher.de'],
      ['a domain in Unicode and in punycode', 'jos\u00e9@b\u00fccher.de', 'jos\u00e9@xn--bcher-kva.de'],
      ['a domain in capitals', 'jos\u00e9@b\u00fccher.de', 'JOS\u00c9@B\u00dcCHER.DE'],
      ['the Kelvin sign, canonically a K', 'kim@example.com', '\u212aim@example.com'],
      ['a capital sharp s, lower-cased before IDNA (which would make it "ss")', 'max@stra\u00dfe.de', 'MAX@STRA\u1e9eE.DE'],
    ])('writes one mailbox one way: %s', (_, one, other) => {
      expect(normalizeEmail(other)).toBe(normalizeEmail(one));
      expect(contactKey(ORG, normalizeEmail(other))).toBe(contactKey(ORG, normalizeEmail(one)));
    });

    it.each([
      ['IDNA would map ⁽ to (', 'ab@ex\u207dample.com'],
      ['NFC would map the Greek question mark to ;', 'a\u037eb@example.com'],
    ])('keeps the form of before where a mapping would make an address the API refuses as input: %s', (_, email) => {
      expect(normalizeEmail(email)).toBe(email);
      expect(legacyFormOf(email)).toBeNull();
    });

    it('finds a form of before only where no address is normalized to it now', () => {
      expect(legacyFormOf('Jose\u0301@Example.com')).toBe('jose\u0301@example.com');
      expect(legacyFormOf('ana@XN--BCHER-KVA.de')).toBe('ana@xn--bcher-kva.de');
      expect(legacyFormOf('MAX@STRA\u1e9eE.DE')).toBeNull();
      expect(legacyFormOf('Jane@Example.COM')).toBeNull();
    });

    it('keeps the domain in Unicode, lower-cased, and one IDNA refuses as it is', () => {
      expect(normalizeEmail('Jos\u00e9@XN--BCHER-KVA.DE')).toBe('jos\u00e9@b\u00fccher.de');
      expect(normalizeEmail('a@XN--ZZ.com')).toBe('a@xn--zz.com');
    });

    it('gives the same e-mail in another organization another id', () => {
      expect(contactKey('org_2', EMAIL)).not.toBe(contactKey(ORG, EMAIL));
    });

    it('produces opaque ids that do not contain the e-mail', () => {
      expect(CONTACT).toMatch(/^ct_[0-9a-f]{32}$/);
      expect(CONTACT).not.toContain('jane');
    });
  });
});
