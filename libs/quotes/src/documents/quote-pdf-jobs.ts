import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { fold, upcast } from '@lib/event-sourcing';
import { EventStore, type EventFilter, type RecordedEvent } from '@lib/event-store';
import { OrganizationDirectory } from '@lib/organizations';
import { ReadStore } from '@lib/read-store';
import type { Reactor } from '@lib/runtime';
import { APP_CONFIG, Clock, type AppConfig } from '@lib/shared';
import { SubmissionLookup } from '@lib/submissions';
import { quoteDecider, type Quote } from '../domain/quote.decider';
import { QUOTE_STREAM, type QuoteEvent } from '../domain/quote.events';
import { documentLocale, type UnitSystem } from './document-locale';
import { DocumentSignal } from './document-signal';
import { JobStore, newJob, type JobRecord, type JobStatus } from './job-queue';
import type { QuotePdfContent } from './quote-pdf';

export const QUOTE_PDFS = 'quote_pdfs_v1';

/** The PDF of one quote version: what it shows, and where its generation stands. */
export interface QuotePdfRecord extends JobRecord {
  organizationId: string;
  quoteId: string;
  version: number;
  content: QuotePdfContent;
  /** hash of `content`: an event that leaves it unchanged does not regenerate the PDF */
  fingerprint: string;
  /** global position of the latest event this content reflects */
  contentPosition: number;
  /** FileStore key of the generated PDF, once ready */
  fileKey: string | null;
  generatedAt: number | null;
  /**
   * The file of what the record showed before it was armed again (its content changed): no record
   * points to it any more, so it is deleted once the new file is made. Until 2026-11-27 such
   * files stayed in `pdfs/` for good, one more for every change to a draft (found by a review).
   */
  supersededFileKey?: string | null;
}

export type PdfStatus = 'pending' | 'generating' | 'ready' | 'failed';

const API_STATUS: Record<JobStatus, PdfStatus> = { pending: 'pending', working: 'generating', done: 'ready', failed: 'failed' };
export const pdfStatusOf = (record: QuotePdfRecord): PdfStatus => API_STATUS[record.status];

export const quotePdfId = (quoteId: string, version: number) => `${quoteId}:v${version}`;

/**
 * The record to be generated again: fresh bookkeeping (no attempts, due after the schedule's first
 * delay), no file yet (the one it had, to be deleted once the new one is made), `changes` on top.
 */
export function rearmed(current: QuotePdfRecord, now: number, schedule: readonly number[], changes: Partial<QuotePdfRecord> = {}): QuotePdfRecord {
  const supersededFileKey = current.fileKey ?? current.supersededFileKey ?? null;
  return { ...current, ...newJob(current.id, now, schedule), createdAt: current.createdAt, _rev: current._rev, fileKey: null, generatedAt: null, supersededFileKey, ...changes };
}

@Injectable()
export class QuotePdfJobs extends JobStore<QuotePdfRecord> {
  constructor(reads: ReadStore) {
    super(reads, QUOTE_PDFS);
  }

  find(quoteId: string, version: number): Promise<QuotePdfRecord | null> {
    return this.get(quotePdfId(quoteId, version));
  }
}

/**
 * The events after which a version's content (or its date and validity) may differ, by their
 * stored type names: older stores hold v1 line-item replacements, newer ones v2.
 */
const CONTENT_EVENTS = ['quote.v1.created', 'quote.v1.termsChanged', 'quote.v1.lineItemsReplaced', 'quote.v2.lineItemsReplaced', 'quote.v1.revised', 'quote.v1.sent'];

/** The submission customer's company and postal address, which the quote itself does not keep. */
export interface CustomerDetails {
  companyName: string | null;
  address: string | null;
  postalCode: string | null;
  city: string | null;
  country: string | null;
}

/** A part of the address on one line: a line break typed in it is a space (the PDF draws a line end as one). */
const flat = (part: string | null) => (part === null ? '' : part.replace(/\s+/g, ' ').trim());

/** `12 Baker Street, NW1 6XE London, United Kingdom`: what of it is known, in that order, on one line; null when nothing is. */
function oneLineAddress({ address, postalCode, city, country }: CustomerDetails): string | null {
  const place = [flat(postalCode), flat(city)].filter(Boolean).join(' ');
  return [flat(address), place, flat(country)].filter(Boolean).join(', ') || null;
}

export function pdfContentOf(
  quote: Quote,
  event: QuoteEvent,
  organization: { name: string; locale: string; unitSystem: UnitSystem } | null,
  product: QuotePdfContent['product'],
  customer: CustomerDetails | null = null,
): QuotePdfContent {
  return {
    locale: documentLocale(quote.locale, organization?.locale),
    unitSystem: organization?.unitSystem ?? 'metric',
    organization: { name: organization?.name ?? '' },
    customer: {
      name: quote.customer.name,
      email: quote.customer.email,
      companyName: flat(customer?.companyName ?? null) || null,
      address: customer ? oneLineAddress(customer) : null,
    },
    quoteNumber: quote.quoteNumber,
    version: quote.version,
    reference: quote.terms.reference,
    notes: quote.terms.notes,
    currency: quote.terms.currency,
    taxRate: quote.terms.taxRate,
    validityDays: quote.terms.validityDays,
    validUntil: quote.validUntil,
    // a sent version is dated by its send; a draft by its last change
    issuedAt: event.type === 'quote.v1.sent' ? event.data.sentAt : event.data.at,
    product,
    lineItems: quote.lineItems.map(({ description, quantity, unitPrice, total }) => ({ description, quantity, unitPrice, total })),
    subtotal: quote.totals.subtotal,
    taxAmount: quote.totals.taxAmount,
    total: quote.totals.total,
  };
}

const WRITE_RETRIES = 5;

/**
 * Arms the PDF of a quote version whenever its content may have changed (creation, a draft's
 * change, a revision, a send). Runs in the outbox, at least once per event: the content is the
 * quote folded from its stream up to this event, so a replay or a late redelivery computes the
 * same thing and is ignored (`contentPosition`). The PDF itself is made by the document worker.
 */
@Injectable()
export class QuotePdfReactor implements Reactor {
  readonly name = 'quote-pdfs';
  readonly filter: EventFilter = { streamPrefixes: [QUOTE_STREAM], eventTypePrefixes: CONTENT_EVENTS };
  private readonly logger = new Logger('QuotePdfs');

  constructor(
    private readonly events: EventStore,
    private readonly jobs: QuotePdfJobs,
    private readonly organizations: OrganizationDirectory,
    private readonly submissions: SubmissionLookup,
    private readonly signal: DocumentSignal,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async react(recorded: RecordedEvent): Promise<void> {
    if (!CONTENT_EVENTS.includes(recorded.type)) return;
    const history = await this.events.readStream(recorded.streamId, { maxCount: recorded.revision + 1 });
    const quote = fold(quoteDecider, history.map((e) => upcast(e) as unknown as QuoteEvent));
    if (!quote) return;
    const organization = await this.organizations.find(quote.organizationId);
    const submission = await this.submissions.find(quote.organizationId, quote.submissionId);
    const configuration = submission?.configuration as { width?: unknown; height?: unknown } | undefined;
    const product =
      submission && typeof configuration?.width === 'number' && typeof configuration.height === 'number'
        ? { name: submission.templateName, width: configuration.width, height: configuration.height, unitAmount: submission.unitAmount }
        : null;
    // The submission's customer does not change (PATCH sets only its status and externalRef).
    const content = pdfContentOf(quote, upcast(recorded) as unknown as QuoteEvent, organization, product, submission?.customer ?? null);
    const fingerprint = createHash('sha256').update(JSON.stringify(content)).digest('hex');
    if (await this.arm(quote, content, fingerprint, recorded.position)) this.signal.pending('pdf');
  }

  /** True when the PDF has to be (re)generated. */
  private async arm(quote: Quote, content: QuotePdfContent, fingerprint: string, position: number): Promise<boolean> {
    const id = quotePdfId(quote.quoteId, quote.version);
    for (let attempt = 1; attempt <= WRITE_RETRIES; attempt++) {
      const now = this.clock.now();
      const fresh = { ...newJob(id, now, this.config.pdfRetryScheduleMs), organizationId: quote.organizationId, quoteId: quote.quoteId, version: quote.version };
      const current = await this.jobs.get(id);
      if (!current) {
        if (await this.jobs.create({ ...fresh, content, fingerprint, contentPosition: position, fileKey: null, generatedAt: null })) return true;
        continue;
      }
      if (current.contentPosition >= position) return false;
      const next: QuotePdfRecord =
        current.fingerprint === fingerprint
          ? { ...current, contentPosition: position }
          : rearmed(current, now, this.config.pdfRetryScheduleMs, { content, fingerprint, contentPosition: position });
      if (await this.jobs.compareAndSet(current, next)) return next.status === 'pending';
    }
    this.logger.warn(`the PDF of ${id} changed concurrently ${WRITE_RETRIES} times; the event will be retried`);
    throw new Error(`could not arm the PDF of ${id}`);
  }
}
