import type { FrozenPricing, PricingBreakdown, SubmissionCustomer } from '../domain/submission.types';

/**
 * Records a customer's submitted configuration as a submission. Dispatched by the sessions
 * library when a customer submits; handled here. Returns nothing: the submission id is chosen
 * by the caller so the session and the submission can reference each other.
 */
export class CreateSubmission {
  constructor(
    readonly organizationId: string,
    readonly submissionId: string,
    readonly sessionId: string,
    readonly templateId: string,
    readonly customer: SubmissionCustomer,
    /** canonical configuration (raw ids), as validated by @lib/templates */
    readonly configuration: Record<string, unknown>,
    readonly configHash: string,
    readonly basePricing: PricingBreakdown,
    /** the currency basePricing is in; null when the submitted session did not record it (before 2026-11-27) */
    readonly currency: string | null,
    /** the adjustment frozen at submit time (same configHash), or null */
    readonly externalPricing: FrozenPricing | null,
    readonly locale: string,
    readonly origin: string,
    /** event metadata actor, e.g. `customer:<sessionId>` */
    readonly actor: string,
  ) {}
}
