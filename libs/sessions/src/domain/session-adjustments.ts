import { inDisplayOrder, type FrozenPricing } from '@lib/submissions';
import type { StoredSessionStatus } from './session.decider';
import type { Adjustment, SessionEvent } from './session.events';

/**
 * How many configHashes keep their latest external write. A customer who goes back to a
 * configuration the partner already priced sees that price again (a partner need not answer a hash
 * twice); the bound keeps a session that is reconfigured for hours from growing without limit.
 */
export const ADJUSTMENTS_KEPT = 20;

/**
 * The adjustments with `adjustment` recorded: it replaces the earlier write for its configHash
 * (last write wins) and becomes the newest; beyond ADJUSTMENTS_KEPT the hash written longest ago
 * is dropped. Ordered oldest write first.
 */
export function withAdjustment(adjustments: readonly Adjustment[], adjustment: Adjustment): Adjustment[] {
  const others = adjustments.filter((kept) => kept.configHash !== adjustment.configHash);
  return [...others, adjustment].slice(-ADJUSTMENTS_KEPT);
}

/**
 * The adjustment that prices the current configuration, if the external system has answered for
 * it, in `currency` when given: an answer priced in another currency (the organization's changed
 * since) prices nothing in this one. One recorded before currencies were (2026-11-28) counts.
 */
export function currentAdjustment(adjustments: readonly Adjustment[], configHash: string | null, currency?: string): Adjustment | null {
  const found = configHash === null ? undefined : adjustments.find((adjustment) => adjustment.configHash === configHash);
  if (!found || (currency !== undefined && found.currency !== undefined && found.currency !== currency)) return null;
  return found;
}

/** What decides which external write prices a submitted session's submission. */
export interface SubmittedPricing {
  status: StoredSessionStatus;
  configHash: string | null;
  adjustments: readonly Adjustment[];
  /** null when not recorded (submitted before 2026-11-27) */
  submittedCurrency: string | null;
  submittedWithLivePricing: boolean;
  /** the latest answer to an auto-fill (for the submission), kept apart: a later answer to the configuration replaces it in `adjustments` */
  autofillAnswer: Adjustment | null;
}

/**
 * The external write that prices a submitted session's submission (api-v1 session lifecycle:
 * answering the `submission` event still freezes): the one for the final configHash, in the
 * submission's currency, when live pricing was on at submit or the write answers an auto-fill the
 * organization asked for since. Null before submit and when none does.
 */
export function submissionAdjustment(session: SubmittedPricing): Adjustment | null {
  if (session.status !== 'submitted') return null;
  const currency = session.submittedCurrency ?? undefined;
  if (session.submittedWithLivePricing) return currentAdjustment(session.adjustments, session.configHash, currency);
  // Submitted while live pricing was off: the product's own price stands, against a late answer
  // to the configuration too; an auto-fill the organization asked for since still prices it, also
  // after such a late answer (a review of the first version of this rule found the page showing
  // the base price then, while the submission kept the auto-fill's).
  return session.autofillAnswer && currentAdjustment([session.autofillAnswer], session.configHash, currency);
}

/** The adjustment in the shape of api-v1 (`adjustments`, `externalPricing`): the currency it was rounded in is the session's own record. */
export function asRecorded({ configHash, lineItems, subtotal, receivedAt }: Adjustment): FrozenPricing {
  return { configHash, lineItems, subtotal, receivedAt };
}

/** The adjustment as the customer sees it and as it is frozen onto a submission. */
export function forDisplay(adjustment: Adjustment): FrozenPricing {
  return { ...asRecorded(adjustment), lineItems: inDisplayOrder(adjustment.lineItems) };
}

/** The adjustment an `adjustmentReceived` event records. */
export function adjustmentOf({ data }: Extract<SessionEvent, { type: 'session.v1.adjustmentReceived' }>): Adjustment {
  const adjustment: Adjustment = { configHash: data.configHash, lineItems: data.lineItems, subtotal: data.subtotal, receivedAt: data.at };
  if (data.currency !== undefined) adjustment.currency = data.currency;
  return adjustment;
}
