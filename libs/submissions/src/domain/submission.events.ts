import type { Configuration, ResolvedConfiguration } from '@lib/templates';
import type { SubmissionStatus } from '../application/submission-lookup';
import type { FrozenPricing, PricingBreakdown, SubmissionCustomer } from './submission.types';

export const SUBMISSION_STATUSES = ['new', 'quoted', 'closed'] as const satisfies readonly SubmissionStatus[];

/** Why a status moved: an API PATCH, the first quote of the submission, or an accepted quote (decisions §7). */
export type StatusChangeCause = 'api' | 'quoteCreated' | 'quoteAccepted';

/**
 * The submission aggregate (stream `submission-<id>`). `created` keeps what the customer chose in
 * words as well as ids (`resolvedConfiguration`, template name and slug as they were at submit
 * time), so a later change of the template does not rewrite what was ordered.
 */
export type SubmissionEvent =
  | {
      type: 'submission.v1.created';
      data: {
        organizationId: string;
        submissionId: string;
        sessionId: string;
        templateId: string;
        templateName: string;
        templateSlug: string;
        customer: SubmissionCustomer;
        configuration: Configuration;
        configHash: string;
        resolvedConfiguration: ResolvedConfiguration;
        basePricing: PricingBreakdown;
        /** the currency of basePricing (and of the frozen external pricing); absent before 2026-11-27 */
        currency?: string;
        externalPricing: FrozenPricing | null;
        locale: string;
        origin: string;
        at: number;
      };
    }
  | {
      type: 'submission.v1.statusChanged';
      data: { organizationId: string; submissionId: string; from: SubmissionStatus; to: SubmissionStatus; cause: StatusChangeCause; quoteId: string | null; at: number };
    }
  | { type: 'submission.v1.quoteRecorded'; data: { organizationId: string; submissionId: string; quoteId: string; at: number } }
  | { type: 'submission.v1.externalRefChanged'; data: { organizationId: string; submissionId: string; externalRef: string | null; at: number } }
  | {
      /** a live-pricing answer for the submitted configuration, arrived after submit (api-v1 session lifecycle) */
      type: 'submission.v1.externalPricingFrozen';
      data: { organizationId: string; submissionId: string; externalPricing: FrozenPricing; at: number };
    }
  | {
      /** an organization user asked for a live price to auto-fill a quote (decisions §4): live pricing sends `pricing.calculated` */
      type: 'submission.v1.autofillRequested';
      /** `request`: the keyed request that asked (idempotentId): its retry asks nothing more; absent without a key */
      data: { organizationId: string; submissionId: string; at: number; request?: string };
    };

export type SubmissionCreatedData = Extract<SubmissionEvent, { type: 'submission.v1.created' }>['data'];

export const SUBMISSION_STREAM = 'submission-';
export const submissionStream = (submissionId: string) => `${SUBMISSION_STREAM}${submissionId}`;
