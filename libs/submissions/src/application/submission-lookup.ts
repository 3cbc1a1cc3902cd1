import type { FrozenPricing, PricingBreakdown, SubmissionCustomer } from '../domain/submission.types';

export type SubmissionStatus = 'new' | 'quoted' | 'closed';

/** What other libraries (quotes) may read about a submission. */
export interface SubmissionView {
  id: string;
  organizationId: string;
  templateId: string;
  templateName: string;
  sessionId: string;
  status: SubmissionStatus;
  customer: SubmissionCustomer;
  configuration: Record<string, unknown>;
  configHash: string;
  unitAmount: number;
  locale: string;
  basePricing: PricingBreakdown;
  /** the currency of its prices; null when unknown (made before 2026-11-27) */
  currency: string | null;
  externalPricing: FrozenPricing | null;
  latestQuoteId: string | null;
  externalRef: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Implemented by the submissions library (reads its read model). */
export abstract class SubmissionLookup {
  /** null for an unknown id or another organization's submission */
  abstract find(organizationId: string, submissionId: string): Promise<SubmissionView | null>;
}
