import type { FrozenPricing, PricedLineItem, PricingBreakdown, SubmissionCustomer } from '@lib/submissions';
import type { Configuration } from '@lib/templates';

export const SESSION_ORIGINS = ['storefront', 'embed', 'org_customize'] as const;
export type SessionOrigin = (typeof SESSION_ORIGINS)[number];

export const SESSION_LOCALES = ['en', 'de', 'nl'] as const;
export type SessionLocale = (typeof SESSION_LOCALES)[number];

/** What a `pricing.calculated` event asks a price for (decisions §7, api-v1 Events). */
export type PricingContext = 'configuration' | 'submission' | 'autofill';

/**
 * What a capability token grants (decisions §8): writes for one configHash of the session until
 * `expiresAt`. Only the token's SHA-256 is recorded; the token is derived from the delivery id and
 * generation, so every attempt of one generation carries the same one.
 */
export interface PricingTokenGrant {
  tokenHash: string;
  configHash: string;
  context: PricingContext;
  /** set for the contexts `submission` and `autofill` */
  submissionId: string | null;
  /** the webhook delivery that carries the token; a later generation of it supersedes this one */
  deliveryId: string;
  generation: number;
  issuedAt: number;
  expiresAt: number;
}

/** A live-pricing write for one configHash (api-v1 session `adjustments`). */
/** An external write as the session keeps it: `currency` is the one it was priced in (recorded since 2026-11-28). */
export type Adjustment = FrozenPricing & { currency?: string };
export type AdjustmentLineItem = PricedLineItem;

/**
 * The configuration-session aggregate (stream `session-<id>`). `configurationChanged` is emitted
 * only when the configHash changes, so every such event is a new hash: live pricing hangs its
 * `pricing.calculated` (context `configuration`) on it. `submitted` carries the frozen adjustment
 * when one matched the final hash, else null (then live pricing sends context `submission`).
 */
export type SessionEvent =
  | {
      type: 'session.v1.started';
      data: {
        organizationId: string;
        sessionId: string;
        templateId: string;
        origin: SessionOrigin;
        locale: SessionLocale;
        /** SHA-256 of the customer token; the token itself is never stored */
        customerTokenHash: string;
        at: number;
      };
    }
  | {
      type: 'session.v1.configurationChanged';
      data: {
        organizationId: string;
        sessionId: string;
        templateId: string;
        locale: SessionLocale;
        configuration: Configuration;
        configHash: string;
        /** null for the session's first configuration */
        previousConfigHash: string | null;
        basePricing: PricingBreakdown;
        at: number;
      };
    }
  | {
      type: 'session.v1.adjustmentReceived';
      data: {
        organizationId: string;
        sessionId: string;
        configHash: string;
        lineItems: AdjustmentLineItem[];
        subtotal: number;
        at: number;
        /** an answer to an auto-fill (for the submission), recorded since 2026-11-27 */
        forSubmission?: true;
        /** the currency the amounts were rounded in: the organization's, or the submission's (recorded since 2026-11-28) */
        currency?: string;
      };
    }
  | {
      /** a capability token was handed to the external system in a `pricing.calculated` delivery */
      type: 'session.v1.pricingTokenIssued';
      data: { organizationId: string; sessionId: string } & PricingTokenGrant;
    }
  | {
      type: 'session.v1.submitted';
      data: {
        organizationId: string;
        sessionId: string;
        templateId: string;
        submissionId: string;
        customer: SubmissionCustomer;
        configuration: Configuration;
        configHash: string;
        /** priced again at submit time, against the template as it is then */
        basePricing: PricingBreakdown;
        /** the currency of basePricing: the organization's at submit (absent in events before 2026-11-27) */
        currency?: string;
        /** whether the organization's live pricing was on at submit (absent before 2026-11-27: it was taken as on) */
        livePricing?: boolean;
        externalPricing: FrozenPricing | null;
        at: number;
      };
    };

export const SESSION_STREAM = 'session-';
export const sessionStream = (sessionId: string) => `${SESSION_STREAM}${sessionId}`;
