import { Injectable } from '@nestjs/common';
import { withoutBookkeeping } from '@lib/event-sourcing';
import { ReadStore, type Filter, type FindResult } from '@lib/read-store';
import { NotFound } from '@lib/shared';
import { SUBMISSIONS, type SubmissionDocument } from '../projections/submissions.projection';
import { SubmissionLookup, type SubmissionStatus, type SubmissionView } from './submission-lookup';

export interface SubmissionFilters {
  status?: SubmissionStatus;
  templateId?: string;
  /** Unix ms, exclusive */
  createdAfter?: number;
  /** Unix ms, exclusive */
  createdBefore?: number;
}

export const SUBMISSION_LIST_SORT = [
  { field: 'createdAt', direction: 'desc' },
  { field: 'id', direction: 'desc' },
] as const;

/** Reads of the submissions read model, always scoped to one organization. */
@Injectable()
export class SubmissionQueries {
  constructor(private readonly reads: ReadStore) {}

  async find(organizationId: string, submissionId: string): Promise<SubmissionDocument | null> {
    const document = await this.reads.get<SubmissionDocument>(SUBMISSIONS, submissionId);
    return document && document.organizationId === organizationId ? withoutBookkeeping(document) : null;
  }

  async get(organizationId: string, submissionId: string): Promise<SubmissionDocument> {
    const document = await this.find(organizationId, submissionId);
    if (!document) throw new NotFound('Submission');
    return document;
  }

  /** Newest first; `after` is the previous page's `nextAfter`. */
  async list(organizationId: string, filters: SubmissionFilters, limit: number, after?: unknown[]): Promise<FindResult<SubmissionDocument>> {
    const filter: Filter = { organizationId };
    if (filters.status !== undefined) filter.status = filters.status;
    if (filters.templateId !== undefined) filter.templateId = filters.templateId;
    if (filters.createdAfter !== undefined || filters.createdBefore !== undefined) {
      filter.createdAt = { gt: filters.createdAfter, lt: filters.createdBefore };
    }
    const { items, nextAfter } = await this.reads.find<SubmissionDocument>(SUBMISSIONS, { filter, sort: [...SUBMISSION_LIST_SORT], limit, after });
    return { items: items.map((d) => withoutBookkeeping(d)), nextAfter };
  }
}

/** api-v1 Submission list item. */
export function toSubmissionListItem(submission: SubmissionDocument) {
  return {
    id: submission.id,
    templateId: submission.templateId,
    status: submission.status,
    customer: submission.customer,
    dimensions: submission.dimensions,
    unitAmount: submission.unitAmount,
    locale: submission.locale,
    externalRef: submission.externalRef,
    createdAt: submission.createdAt,
  };
}

/** api-v1 single-submission read: the list item, the detail fields, and what was priced. */
export function toSubmissionDetail(submission: SubmissionDocument) {
  return {
    ...toSubmissionListItem(submission),
    configuration: submission.configuration,
    resolvedConfiguration: submission.resolvedConfiguration,
    externalPricing: submission.externalPricing,
    latestQuoteId: submission.latestQuoteId,
    configHash: submission.configHash,
    basePricing: submission.basePricing,
    currency: submission.currency ?? null,
    origin: submission.origin,
    updatedAt: submission.updatedAt,
  };
}

/** The SubmissionLookup other libraries (quotes) use, backed by the read model. */
@Injectable()
export class ReadModelSubmissionLookup extends SubmissionLookup {
  constructor(private readonly queries: SubmissionQueries) {
    super();
  }

  async find(organizationId: string, submissionId: string): Promise<SubmissionView | null> {
    const s = await this.queries.find(organizationId, submissionId);
    if (!s) return null;
    return {
      id: s.id,
      organizationId: s.organizationId,
      templateId: s.templateId,
      templateName: s.templateName,
      sessionId: s.sessionId,
      status: s.status,
      customer: s.customer,
      configuration: s.configuration as unknown as Record<string, unknown>,
      configHash: s.configHash,
      unitAmount: s.unitAmount,
      locale: s.locale,
      basePricing: s.basePricing,
      currency: s.currency ?? null,
      externalPricing: s.externalPricing,
      latestQuoteId: s.latestQuoteId,
      externalRef: s.externalRef,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
    };
  }
}
