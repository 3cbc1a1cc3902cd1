import { inDisplayOrder } from '@lib/submissions';
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

/** The adjustment that prices the current configuration, if the external system has answered for it. */
export function currentAdjustment(adjustments: readonly Adjustment[], configHash: string | null): Adjustment | null {
  return (configHash !== null && adjustments.find((adjustment) => adjustment.configHash === configHash)) || null;
}

/** The adjustment as the customer sees it and as it is frozen onto a submission. */
export function forDisplay(adjustment: Adjustment): Adjustment {
  return { ...adjustment, lineItems: inDisplayOrder(adjustment.lineItems) };
}

/** The adjustment an `adjustmentReceived` event records. */
export function adjustmentOf({ data }: Extract<SessionEvent, { type: 'session.v1.adjustmentReceived' }>): Adjustment {
  return { configHash: data.configHash, lineItems: data.lineItems, subtotal: data.subtotal, receivedAt: data.at };
}
