import { Injectable } from '@nestjs/common';
import { ReadStore } from '@lib/read-store';
import type { QuoteMail } from '../application/quote-mailer';
import { JobStore, type JobRecord, type JobStatus } from './job-queue';

export const QUOTE_MAILS = 'quote_mails_v1';

/** One quote e-mail to its recipients (one per `quote.v1.sent`): the message and its delivery state. */
export interface QuoteMailRecord extends JobRecord {
  organizationId: string;
  quoteId: string;
  version: number;
  message: QuoteMail;
  /** global position of the send: the attached PDF must reflect at least this event */
  sentPosition: number;
  deliveredAt: number | null;
  /** whether the delivered message carried the PDF */
  pdfAttached: boolean;
}

export type MailStatus = 'pending' | 'sending' | 'sent' | 'failed';

const API_STATUS: Record<JobStatus, MailStatus> = { pending: 'pending', working: 'sending', done: 'sent', failed: 'failed' };

/** GET /quotes/{id}/emails item. */
export function toMailDelivery(record: QuoteMailRecord) {
  return {
    id: record.id,
    version: record.version,
    recipients: record.message.to,
    locale: record.message.locale,
    subject: record.message.subject,
    status: API_STATUS[record.status],
    attempts: record.attempts,
    maxAttempts: record.maxAttempts,
    lastError: record.lastError,
    nextAttemptAt: record.status === 'pending' ? record.scheduledFor : null,
    deliveredAt: record.deliveredAt,
    pdfAttached: record.pdfAttached,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export type MailDelivery = ReturnType<typeof toMailDelivery>;

@Injectable()
export class QuoteMailJobs extends JobStore<QuoteMailRecord> {
  constructor(reads: ReadStore) {
    super(reads, QUOTE_MAILS, [{ fields: [{ field: 'quoteId', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }] }]);
  }

  listForQuote(quoteId: string, limit: number, after?: unknown[]) {
    return this.reads.find<QuoteMailRecord>(QUOTE_MAILS, {
      filter: { quoteId },
      sort: [{ field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }],
      limit,
      after,
    });
  }
}
