import { isDeepStrictEqual } from 'node:util';
import type { Decider } from '@lib/event-sourcing';
import { ConcurrentModification, NotFound } from '@lib/shared';
import type { FrozenPricing, PricingBreakdown, SubmissionCustomer } from '@lib/submissions';
import type { Configuration } from '@lib/templates';
import { adjustmentOf, currentAdjustment, forDisplay, withAdjustment } from './session-adjustments';
import { SessionAlreadySubmitted, SessionExpired, SessionNotConfigured, StaleConfigHash } from './session.errors';
import type { Adjustment, AdjustmentLineItem, PricingTokenGrant, SessionEvent, SessionLocale, SessionOrigin } from './session.events';

export type StoredSessionStatus = 'active' | 'submitted';
/** `expired` is never stored: it is derived from the idle time whenever the session is read or written. */
export type SessionStatus = StoredSessionStatus | 'expired';

export interface SessionState {
  exists: boolean;
  sessionId: string | null;
  organizationId: string | null;
  templateId: string | null;
  origin: SessionOrigin | null;
  locale: SessionLocale | null;
  status: StoredSessionStatus;
  configuration: Configuration | null;
  configHash: string | null;
  /** when the current configHash was set (the customer's wait for a live price runs from here); null before */
  configuredAt: number | null;
  basePricing: PricingBreakdown;
  /** the latest external write per configHash, for the most recently written hashes (session-adjustments.ts) */
  adjustments: Adjustment[];
  submissionId: string | null;
  /** the currency the submission was priced in (recorded since 2026-11-27); null before submit or when not recorded */
  submittedCurrency: string | null;
  /** live pricing was on at submit: only then do later answers for the configuration price the submission */
  submittedWithLivePricing: boolean;
  /** the latest answer to an auto-fill (asked for by the organization, it prices the submission in any case) */
  autofillAnswer: Adjustment | null;
  lastActivityAt: number;
  /** the newest token generation issued per webhook delivery (deliveryId → generation) */
  pricingTokens: Record<string, number>;
}

/** Time and the idle limit arrive with each write, so expiry is decided without a clock. */
interface Timed {
  at: number;
  idleTtlMs: number;
}

export type SessionCommand =
  | {
      type: 'startSession';
      sessionId: string;
      organizationId: string;
      templateId: string;
      origin: SessionOrigin;
      locale: SessionLocale;
      customerTokenHash: string;
      at: number;
    }
  | ({ type: 'changeConfiguration'; configuration: Configuration; configHash: string; basePricing: PricingBreakdown } & Timed)
  | ({
      type: 'submitSession';
      submissionId: string;
      customer: SubmissionCustomer;
      /** the hash the caller validated and priced; a different current hash means the configuration changed meanwhile */
      configHash: string;
      basePricing: PricingBreakdown;
      /** the organization's currency, which basePricing is in */
      currency: string;
      /** the organization's live pricing is on: only then does the partner's price go with the submission */
      livePricing: boolean;
    } & Timed)
  | ({
      type: 'recordAdjustment';
      configHash: string;
      lineItems: AdjustmentLineItem[];
      subtotal: number;
      /** the currency lineItems and subtotal were rounded in */
      currency: string;
      /** an answer for the submitted session's submission (auto-fill): a submission never idles out */
      forSubmission?: boolean;
    } & Timed)
  | ({ type: 'issuePricingToken' } & PricingTokenGrant);

export const EMPTY_PRICING: PricingBreakdown = { lineItems: [], subtotal: 0 };

const initialState = (): SessionState => ({
  exists: false,
  sessionId: null,
  organizationId: null,
  templateId: null,
  origin: null,
  locale: null,
  status: 'active',
  configuration: null,
  configHash: null,
  configuredAt: null,
  basePricing: EMPTY_PRICING,
  adjustments: [],
  submissionId: null,
  lastActivityAt: 0,
  submittedCurrency: null,
  submittedWithLivePricing: true,
  autofillAnswer: null,
  pricingTokens: {},
});

/** decisions §7: idle for more than SESSION_IDLE_TTL_MS since the customer's last write. */
export function isIdleExpired(lastActivityAt: number, now: number, idleTtlMs: number): boolean {
  return now - lastActivityAt > idleTtlMs;
}

export function sessionStatus(stored: StoredSessionStatus, lastActivityAt: number, now: number, idleTtlMs: number): SessionStatus {
  return isIdleExpired(lastActivityAt, now, idleTtlMs) ? 'expired' : stored;
}

type ExistingSession = SessionState & { sessionId: string; organizationId: string; templateId: string; locale: SessionLocale };

function existing(state: SessionState): ExistingSession {
  if (!state.exists) throw new NotFound('Session');
  return state as ExistingSession;
}

/** The customer's writes: refused on an expired session (410), and on a submitted one (409). */
export function assertCustomerMayWrite(state: SessionState, at: number, idleTtlMs: number): void {
  if (isIdleExpired(state.lastActivityAt, at, idleTtlMs)) throw new SessionExpired();
  if (state.status === 'submitted') throw new SessionAlreadySubmitted(state.submissionId!);
}

function decide(command: SessionCommand, state: SessionState): SessionEvent[] {
  switch (command.type) {
    case 'startSession': {
      if (state.exists) throw new ConcurrentModification('The session');
      const { type: _type, ...data } = command;
      return [{ type: 'session.v1.started', data }];
    }
    case 'changeConfiguration': {
      const session = existing(state);
      assertCustomerMayWrite(session, command.at, command.idleTtlMs);
      // The same configuration again is nothing new, unless the template changed its price meanwhile:
      // then the customer is shown the new base price, and the partner is asked to price it again.
      if (command.configHash === session.configHash && isDeepStrictEqual(command.basePricing, session.basePricing)) return [];
      return [
        {
          type: 'session.v1.configurationChanged',
          data: {
            organizationId: session.organizationId,
            sessionId: session.sessionId,
            templateId: session.templateId,
            locale: session.locale,
            configuration: command.configuration,
            configHash: command.configHash,
            previousConfigHash: session.configHash,
            basePricing: command.basePricing,
            at: command.at,
          },
        },
      ];
    }
    case 'submitSession': {
      const session = existing(state);
      assertCustomerMayWrite(session, command.at, command.idleTtlMs);
      if (!session.configuration || !session.configHash) throw new SessionNotConfigured();
      if (command.configHash !== session.configHash) throw new ConcurrentModification('The configuration');
      const adjustment = command.livePricing ? currentAdjustment(session.adjustments, session.configHash, command.currency) : null;
      const externalPricing: FrozenPricing | null = adjustment ? forDisplay(adjustment) : null;
      return [
        {
          type: 'session.v1.submitted',
          data: {
            organizationId: session.organizationId,
            sessionId: session.sessionId,
            templateId: session.templateId,
            submissionId: command.submissionId,
            customer: command.customer,
            configuration: session.configuration,
            configHash: session.configHash,
            basePricing: command.basePricing,
            currency: command.currency,
            livePricing: command.livePricing,
            externalPricing,
            at: command.at,
          },
        },
      ];
    }
    case 'recordAdjustment': {
      const session = existing(state);
      // External writes are not customer activity: they neither refresh nor escape the idle limit,
      // except an answer for the submission, which outlives the customer's session.
      if (!command.forSubmission && isIdleExpired(session.lastActivityAt, command.at, command.idleTtlMs)) throw new SessionExpired();
      if (command.configHash !== session.configHash) throw new StaleConfigHash(session.configHash);
      return [
        {
          type: 'session.v1.adjustmentReceived',
          data: {
            organizationId: session.organizationId,
            sessionId: session.sessionId,
            configHash: command.configHash,
            lineItems: command.lineItems,
            subtotal: command.subtotal,
            at: command.at,
            ...(command.forSubmission && { forSubmission: true as const }),
            currency: command.currency,
          },
        },
      ];
    }
    case 'issuePricingToken': {
      const session = existing(state);
      // Every attempt of a delivery generation carries the same derived token: record it once.
      // Not customer activity, and allowed on an expired session (an autofill answers for the submission).
      if ((session.pricingTokens[command.deliveryId] ?? -1) >= command.generation) return [];
      const { type: _type, ...grant } = command;
      return [{ type: 'session.v1.pricingTokenIssued', data: { organizationId: session.organizationId, sessionId: session.sessionId, ...grant } }];
    }
  }
}

function evolve(state: SessionState, event: SessionEvent): SessionState {
  switch (event.type) {
    case 'session.v1.started':
      return {
        ...state,
        exists: true,
        sessionId: event.data.sessionId,
        organizationId: event.data.organizationId,
        templateId: event.data.templateId,
        origin: event.data.origin,
        locale: event.data.locale,
        lastActivityAt: event.data.at,
      };
    case 'session.v1.configurationChanged':
      return {
        ...state,
        configuration: event.data.configuration,
        configHash: event.data.configHash,
        configuredAt: event.data.at,
        basePricing: event.data.basePricing,
        lastActivityAt: event.data.at,
      };
    case 'session.v1.adjustmentReceived':
      return {
        ...state,
        adjustments: withAdjustment(state.adjustments, adjustmentOf(event)),
        autofillAnswer: event.data.forSubmission ? adjustmentOf(event) : state.autofillAnswer,
      };
    case 'session.v1.pricingTokenIssued':
      return { ...state, pricingTokens: { ...state.pricingTokens, [event.data.deliveryId]: event.data.generation } };
    case 'session.v1.submitted':
      return {
        ...state,
        status: 'submitted',
        submissionId: event.data.submissionId,
        submittedCurrency: event.data.currency ?? null,
        submittedWithLivePricing: event.data.livePricing ?? true,
        basePricing: event.data.basePricing,
        lastActivityAt: event.data.at,
      };
  }
}

export const sessionDecider: Decider<SessionState, SessionCommand, SessionEvent> = { initialState, decide, evolve };
