import { collectionName, type Projection, type ProjectedDocument } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import type { IndexSpec } from '@lib/read-store';
import type { Configuration, ResolvedConfiguration } from '@lib/templates';
import type { SubmissionStatus } from '../application/submission-lookup';
import { SUBMISSION_STREAM, type SubmissionEvent } from '../domain/submission.events';
import type { FrozenPricing, PricingBreakdown, SubmissionCustomer } from '../domain/submission.types';

export interface SubmissionDocument extends ProjectedDocument {
  id: string;
  organizationId: string;
  sessionId: string;
  templateId: string;
  templateName: string;
  templateSlug: string;
  status: SubmissionStatus;
  customer: SubmissionCustomer;
  configuration: Configuration;
  configHash: string;
  resolvedConfiguration: ResolvedConfiguration;
  dimensions: { width: number; height: number };
  unitAmount: number;
  locale: string;
  origin: string;
  basePricing: PricingBreakdown;
  /** the currency its prices are in; absent (unknown) on submissions made before 2026-11-27 */
  currency?: string | null;
  externalPricing: FrozenPricing | null;
  latestQuoteId: string | null;
  externalRef: string | null;
  createdAt: number;
  updatedAt: number;
}

/** GET /api/v1/submissions is newest first; one index per filter, each ending in that order. */
const newestFirst = (...filters: string[]): IndexSpec => ({
  fields: [
    { field: 'organizationId', direction: 'asc' },
    ...filters.map((field) => ({ field, direction: 'asc' as const })),
    { field: 'createdAt', direction: 'desc' },
    { field: 'id', direction: 'desc' },
  ],
});

export const submissionsProjection: Projection = {
  name: 'submissions',
  version: 1,
  collections: {
    // createdAfter/createdBefore are ranges on createdAt, served by the same indexes.
    submissions: [newestFirst(), newestFirst('status'), newestFirst('templateId'), newestFirst('status', 'templateId')],
  },
  filter: { streamPrefixes: [SUBMISSION_STREAM] },
  async handle(recorded: RecordedEvent, context) {
    const event = recorded as unknown as SubmissionEvent;
    if (event.type === 'submission.v1.created') {
      const { submissionId, at, configuration, ...data } = event.data;
      context.put('submissions', {
        id: submissionId,
        organizationId: data.organizationId,
        sessionId: data.sessionId,
        templateId: data.templateId,
        templateName: data.templateName,
        templateSlug: data.templateSlug,
        status: 'new',
        customer: data.customer,
        configuration,
        configHash: data.configHash,
        resolvedConfiguration: data.resolvedConfiguration,
        dimensions: { width: configuration.width, height: configuration.height },
        unitAmount: configuration.unitAmount,
        locale: data.locale,
        origin: data.origin,
        basePricing: data.basePricing,
        currency: data.currency ?? null,
        externalPricing: data.externalPricing,
        latestQuoteId: null,
        externalRef: null,
        createdAt: at,
        updatedAt: at,
      } satisfies SubmissionDocument);
      return;
    }
    // A request for a live price changes nothing the submission shows.
    if (event.type === 'submission.v1.autofillRequested') return;
    const submission = await context.get<SubmissionDocument>('submissions', event.data.submissionId);
    if (!submission) return;
    const next: SubmissionDocument = { ...submission, updatedAt: event.data.at };
    switch (event.type) {
      case 'submission.v1.statusChanged':
        next.status = event.data.to;
        break;
      case 'submission.v1.quoteRecorded':
        next.latestQuoteId = event.data.quoteId;
        break;
      case 'submission.v1.externalRefChanged':
        next.externalRef = event.data.externalRef;
        break;
      case 'submission.v1.externalPricingFrozen':
        next.externalPricing = event.data.externalPricing;
        break;
    }
    context.put('submissions', next);
  },
};

export const SUBMISSIONS = collectionName(submissionsProjection, 'submissions');
