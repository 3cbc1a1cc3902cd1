import type { Decider } from '@lib/event-sourcing';
import { NotFound, REQUEST_RETRY_WINDOW_MS } from '@lib/shared';
import type { SubmissionStatus } from '../application/submission-lookup';
import { ExternalPricingForAnotherConfiguration } from './submission.errors';
import type { SubmissionCreatedData, SubmissionEvent } from './submission.events';
import type { FrozenPricing } from './submission.types';

export interface SubmissionState {
  exists: boolean;
  submissionId: string | null;
  organizationId: string | null;
  status: SubmissionStatus;
  /** every quote recorded, oldest first: makes MarkSubmissionQuoted idempotent per quote */
  quoteIds: string[];
  /** quotes whose acceptance closed the submission: makes CloseSubmissionOnAcceptance idempotent per acceptance */
  acceptedQuoteIds: string[];
  externalRef: string | null;
  configHash: string | null;
  externalPricing: FrozenPricing | null;
  /** when each keyed auto-fill request (idempotentId) asked: its retry asks nothing more */
  autofillRequests: Readonly<Record<string, number>>;
}

export type SubmissionCommand =
  | ({ type: 'createSubmission' } & SubmissionCreatedData)
  | {
      type: 'updateSubmission';
      organizationId: string;
      /** undefined leaves a field as it is; externalRef null clears it */
      status?: SubmissionStatus;
      externalRef?: string | null;
      at: number;
    }
  | { type: 'markQuoted'; organizationId: string; quoteId: string; at: number }
  | { type: 'closeOnAcceptance'; organizationId: string; quoteId: string; at: number }
  | { type: 'freezeExternalPricing'; organizationId: string; externalPricing: FrozenPricing; at: number }
  | {
      type: 'requestAutofill';
      organizationId: string;
      /** the keyed request's id (idempotentId), the same on its retries */
      request?: string;
      at: number;
    };

const initialState = (): SubmissionState => ({
  exists: false,
  submissionId: null,
  organizationId: null,
  status: 'new',
  quoteIds: [],
  acceptedQuoteIds: [],
  externalRef: null,
  configHash: null,
  externalPricing: null,
  autofillRequests: {},
});

/**
 * The same prices, whenever they arrived: a partner that PUTs its answer again changes nothing
 * frozen (until 2026-11-27 each repeat was frozen anew with its own `receivedAt`; found by a review).
 */
const samePricing = (a: FrozenPricing, b: FrozenPricing) => JSON.stringify({ ...a, receivedAt: 0 }) === JSON.stringify({ ...b, receivedAt: 0 });

/** Another organization's submission does not exist for the caller. */
function ownedBy(state: SubmissionState, organizationId: string): SubmissionState & { submissionId: string; organizationId: string } {
  if (!state.exists || state.organizationId !== organizationId) throw new NotFound('Submission');
  return state as SubmissionState & { submissionId: string; organizationId: string };
}

function decide(command: SubmissionCommand, state: SubmissionState): SubmissionEvent[] {
  switch (command.type) {
    case 'createSubmission': {
      // Submission ids are chosen by the caller: a repeated create of the same id is a retry.
      if (state.exists) return [];
      const { type: _type, ...data } = command;
      return [{ type: 'submission.v1.created', data }];
    }
    case 'updateSubmission': {
      const submission = ownedBy(state, command.organizationId);
      const ids = { organizationId: submission.organizationId, submissionId: submission.submissionId };
      const events: SubmissionEvent[] = [];
      if (command.status !== undefined && command.status !== submission.status) {
        events.push({ type: 'submission.v1.statusChanged', data: { ...ids, from: submission.status, to: command.status, cause: 'api', quoteId: null, at: command.at } });
      }
      if (command.externalRef !== undefined && command.externalRef !== submission.externalRef) {
        events.push({ type: 'submission.v1.externalRefChanged', data: { ...ids, externalRef: command.externalRef, at: command.at } });
      }
      return events;
    }
    case 'markQuoted': {
      const submission = ownedBy(state, command.organizationId);
      if (submission.quoteIds.includes(command.quoteId)) return [];
      const ids = { organizationId: submission.organizationId, submissionId: submission.submissionId };
      const events: SubmissionEvent[] = [{ type: 'submission.v1.quoteRecorded', data: { ...ids, quoteId: command.quoteId, at: command.at } }];
      // Only the first quote moves the status; later ones (and a `new` set again by PATCH) leave it.
      if (submission.quoteIds.length === 0 && submission.status === 'new') {
        events.push({ type: 'submission.v1.statusChanged', data: { ...ids, from: 'new', to: 'quoted', cause: 'quoteCreated', quoteId: command.quoteId, at: command.at } });
      }
      return events;
    }
    case 'closeOnAcceptance': {
      const submission = ownedBy(state, command.organizationId);
      // The outbox delivers an acceptance at least once, maybe late: one that already closed the
      // submission never closes it again after a PATCH reopened it (sessions-and-submissions.md).
      if (submission.status === 'closed' || submission.acceptedQuoteIds.includes(command.quoteId)) return [];
      return [
        {
          type: 'submission.v1.statusChanged',
          data: {
            organizationId: submission.organizationId,
            submissionId: submission.submissionId,
            from: submission.status,
            to: 'closed',
            cause: 'quoteAccepted',
            quoteId: command.quoteId,
            at: command.at,
          },
        },
      ];
    }
    case 'freezeExternalPricing': {
      const submission = ownedBy(state, command.organizationId);
      const incoming = command.externalPricing;
      if (incoming.configHash !== submission.configHash) throw new ExternalPricingForAnotherConfiguration(submission.configHash!);
      // Last write wins by arrival at the session: a late replay of an older answer changes nothing.
      const current = submission.externalPricing;
      if (current && (samePricing(current, incoming) || incoming.receivedAt < current.receivedAt)) return [];
      return [
        {
          type: 'submission.v1.externalPricingFrozen',
          data: { organizationId: submission.organizationId, submissionId: submission.submissionId, externalPricing: incoming, at: command.at },
        },
      ];
    }
    case 'requestAutofill': {
      const submission = ownedBy(state, command.organizationId);
      const { request } = command;
      // The retry of a keyed request whose answer was lost: the partner was asked already.
      const askedAt = request === undefined || !Object.hasOwn(state.autofillRequests, request) ? null : state.autofillRequests[request];
      if (askedAt !== null && command.at - askedAt < REQUEST_RETRY_WINDOW_MS) return [];
      const data = { organizationId: submission.organizationId, submissionId: submission.submissionId, at: command.at };
      return [{ type: 'submission.v1.autofillRequested', data: request === undefined ? data : { ...data, request } }];
    }
  }
}

function evolve(state: SubmissionState, event: SubmissionEvent): SubmissionState {
  switch (event.type) {
    case 'submission.v1.created':
      return {
        ...initialState(),
        exists: true,
        submissionId: event.data.submissionId,
        organizationId: event.data.organizationId,
        configHash: event.data.configHash,
        externalPricing: event.data.externalPricing,
      };
    case 'submission.v1.statusChanged': {
      const { to, cause, quoteId } = event.data;
      // statusChanged has carried cause and quoteId since it shipped: stored streams replay into this,
      // and one that the old reactor closed twice for the same quote counts that quote once.
      if (cause === 'quoteAccepted' && quoteId !== null && !state.acceptedQuoteIds.includes(quoteId)) {
        return { ...state, status: to, acceptedQuoteIds: [...state.acceptedQuoteIds, quoteId] };
      }
      return { ...state, status: to };
    }
    case 'submission.v1.quoteRecorded':
      return { ...state, quoteIds: [...state.quoteIds, event.data.quoteId] };
    case 'submission.v1.externalRefChanged':
      return { ...state, externalRef: event.data.externalRef };
    case 'submission.v1.externalPricingFrozen':
      return { ...state, externalPricing: event.data.externalPricing };
    case 'submission.v1.autofillRequested':
      return event.data.request === undefined ? state : { ...state, autofillRequests: { ...state.autofillRequests, [event.data.request]: event.data.at } };
  }
}

export const submissionDecider: Decider<SubmissionState, SubmissionCommand, SubmissionEvent> = { initialState, decide, evolve };
