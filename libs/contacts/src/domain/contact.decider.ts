import type { Decider } from '@lib/event-sourcing';
import { ContactNotFound } from './contact.errors';
import {
  CONTACT_DETAIL_FIELDS,
  CUSTOMER_FIELDS,
  type ContactChanges,
  type ContactDetails,
  type ContactEvent,
  type ContactUpsertFields,
  type SubmissionCustomerDetails,
} from './contact.events';

export interface ContactState {
  exists: boolean;
  organizationId: string | null;
  contactId: string | null;
  email: string | null;
  details: ContactDetails | null;
  /** submissions already counted, so a repeated dispatch counts nothing */
  submissionIds: string[];
}

export type ContactCommand =
  | { type: 'upsertContact'; organizationId: string; contactId: string; email: string; fields: ContactUpsertFields; at: number }
  | { type: 'changeContact'; changes: ContactChanges; at: number }
  | {
      type: 'recordSubmission';
      organizationId: string;
      contactId: string;
      email: string;
      submissionId: string;
      customer: SubmissionCustomerDetails;
      at: number;
    };

const EMPTY_DETAILS: ContactDetails = {
  name: '',
  phone: null,
  companyName: null,
  address: null,
  postalCode: null,
  city: null,
  country: null,
  externalRef: null,
};

const initialState = (): ContactState => ({
  exists: false,
  organizationId: null,
  contactId: null,
  email: null,
  details: null,
  submissionIds: [],
});

type ExistingContact = ContactState & { organizationId: string; contactId: string; details: ContactDetails };

function existing(state: ContactState): ExistingContact {
  if (!state.exists || !state.organizationId || !state.contactId || !state.details) throw new ContactNotFound();
  return state as ExistingContact;
}

/** The fields of `wanted` whose value differs from `current`; undefined means "leave as is". */
function differences(current: ContactDetails, wanted: ContactChanges): ContactChanges {
  const changes: Record<string, unknown> = {};
  for (const field of CONTACT_DETAIL_FIELDS) {
    const value = wanted[field];
    if (value !== undefined && value !== current[field]) changes[field] = value;
  }
  return changes as ContactChanges;
}

const isBlank = (value: string | null | undefined): boolean => value === null || value === undefined || value.trim() === '';

/** A submission only fills what the contact does not know yet; it never overwrites. */
function fillable(current: ContactDetails, customer: SubmissionCustomerDetails): ContactChanges {
  const fills: Record<string, string> = {};
  for (const field of CUSTOMER_FIELDS) {
    const value = customer[field];
    if (!isBlank(value) && isBlank(current[field])) fills[field] = value!;
  }
  return fills as ContactChanges;
}

function fromCustomer(customer: SubmissionCustomerDetails): ContactDetails {
  const details: ContactDetails = { ...EMPTY_DETAILS };
  for (const field of CUSTOMER_FIELDS) {
    const value = customer[field];
    if (!isBlank(value)) details[field] = value!;
  }
  return details;
}

function decide(command: ContactCommand, state: ContactState): ContactEvent[] {
  switch (command.type) {
    case 'upsertContact': {
      const { organizationId, contactId, email, at } = command;
      if (!state.exists) {
        return [{ type: 'contact.v1.created', data: { organizationId, contactId, email, details: { ...EMPTY_DETAILS, ...withoutUndefined(command.fields) }, at } }];
      }
      return detailsChanged(existing(state), command.fields, at);
    }
    case 'changeContact':
      return detailsChanged(existing(state), command.changes, command.at);
    case 'recordSubmission': {
      const { organizationId, contactId, email, submissionId, customer, at } = command;
      if (state.submissionIds.includes(submissionId)) return [];
      const recorded: ContactEvent = { type: 'contact.v1.submissionRecorded', data: { organizationId, contactId, submissionId, at } };
      if (!state.exists) {
        return [{ type: 'contact.v1.created', data: { organizationId, contactId, email, details: fromCustomer(customer), at } }, recorded];
      }
      const fills = fillable(existing(state).details, customer);
      if (Object.keys(fills).length === 0) return [recorded];
      return [{ type: 'contact.v1.detailsChanged', data: { organizationId, contactId, changes: fills, at } }, recorded];
    }
  }
}

function detailsChanged(contact: ExistingContact, wanted: ContactChanges, at: number): ContactEvent[] {
  const changes = differences(contact.details, wanted);
  if (Object.keys(changes).length === 0) return [];
  return [{ type: 'contact.v1.detailsChanged', data: { organizationId: contact.organizationId, contactId: contact.contactId, changes, at } }];
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function evolve(state: ContactState, event: ContactEvent): ContactState {
  switch (event.type) {
    case 'contact.v1.created':
      return {
        ...state,
        exists: true,
        organizationId: event.data.organizationId,
        contactId: event.data.contactId,
        email: event.data.email,
        details: event.data.details,
      };
    case 'contact.v1.detailsChanged':
      return { ...state, details: { ...state.details!, ...event.data.changes } };
    case 'contact.v1.submissionRecorded':
      return { ...state, submissionIds: [...state.submissionIds, event.data.submissionId] };
  }
}

export const contactDecider: Decider<ContactState, ContactCommand, ContactEvent> = { initialState, decide, evolve };
