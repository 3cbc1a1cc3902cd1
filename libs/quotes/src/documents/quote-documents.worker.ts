import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { FileStore } from '@lib/file-store';
import { APP_CONFIG, Clock, type AppConfig } from '@lib/shared';
import { QuoteMailer, type MailAttachment } from '../application/quote-mailer';
import { quoteLinkUrl } from '../application/quote-links';
import { withQuoteLink } from '../application/quote-sent-mail.reactor';
import { documentLocale } from './document-locale';
import { DocumentSignal } from './document-signal';
import { JobRunner, type JobOutcome } from './job-queue';
import { renderQuotePdf } from './quote-pdf';
import { QuoteMailJobs, type QuoteMailRecord } from './quote-mail-jobs';
import { QuotePdfJobs, quotePdfId, type QuotePdfRecord } from './quote-pdf-jobs';

/** How soon a mail waiting for its PDF looks again. */
const PDF_WAIT_MS = 250;

export const pdfFileKey = (record: Pick<QuotePdfRecord, 'quoteId' | 'version' | 'fingerprint'>) =>
  `quotes/${record.quoteId}/v${record.version}-${record.fingerprint.slice(0, 16)}.pdf`;

export const pdfFileName = (record: Pick<QuotePdfRecord, 'content'>) => `${record.content.quoteNumber}-v${record.content.version}.pdf`;

/**
 * Makes quote PDFs and sends quote e-mails, each with retries on its schedule (runs in the outbox
 * process only, QuoteDocumentsWorkerModule). A mail waits for the PDF of its version as it stood
 * at the send; should that PDF have failed for good, the mail renders it itself, so a quote
 * e-mail never goes out without its PDF.
 */
@Injectable()
export class QuoteDocumentsWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Jobs:quote PDF');
  private readonly pdfRunner: JobRunner<QuotePdfRecord>;
  private readonly mailRunner: JobRunner<QuoteMailRecord>;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly pdfs: QuotePdfJobs,
    private readonly mails: QuoteMailJobs,
    private readonly files: FileStore,
    private readonly mailer: QuoteMailer,
    private readonly signal: DocumentSignal,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.pdfRunner = new JobRunner({ name: 'quote PDF', store: pdfs, attempt: (r) => this.generate(r), schedule: config.pdfRetryScheduleMs, clock });
    this.mailRunner = new JobRunner({ name: 'quote e-mail', store: mails, attempt: (r) => this.deliver(r), schedule: config.mailRetryScheduleMs, clock });
  }

  onApplicationBootstrap(): void {
    this.unsubscribe = this.signal.subscribe((kind) => (kind === 'pdf' ? this.pdfRunner : this.mailRunner).wake());
    this.pdfRunner.start();
    this.mailRunner.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.unsubscribe?.();
    await Promise.all([this.pdfRunner.stop(), this.mailRunner.stop()]);
  }

  private async generate(record: QuotePdfRecord): Promise<JobOutcome<QuotePdfRecord>> {
    const bytes = await renderQuotePdf(record.content);
    const fileKey = pdfFileKey(record);
    await this.files.put(fileKey, bytes);
    // The file of the content before (no record points to it), unless that content is back. A
    // file that cannot be deleted costs disk, not the new PDF (a review: the job failed with it).
    const superseded = record.supersededFileKey;
    if (superseded && superseded !== fileKey) {
      await this.files.delete(superseded).catch((error: unknown) => this.logger.warn(`could not delete the superseded PDF ${superseded}: ${String(error)}`));
    }
    // a mail may be waiting for this PDF
    this.mailRunner.wake();
    return { kind: 'done', changes: { fileKey, generatedAt: this.clock.now(), supersededFileKey: null } };
  }

  private async deliver(record: QuoteMailRecord): Promise<JobOutcome<QuoteMailRecord>> {
    const pdf = await this.pdfs.get(quotePdfId(record.quoteId, record.version));
    const attachment = await this.attachmentFor(record, pdf);
    if (!attachment) {
      // a PDF waiting for its next retry is not looked at before that retry is due
      const soonest = this.clock.now() + PDF_WAIT_MS;
      return { kind: 'wait', until: pdf?.status === 'pending' ? Math.max(soonest, pdf.scheduledFor) : soonest, note: 'waiting for the PDF' };
    }
    // The stored message holds a slot for the quote link, a credential: it is derived for each attempt.
    await this.mailer.send(withQuoteLink(record.message, quoteLinkUrl(this.config, record.quoteId)), [attachment]);
    return { kind: 'done', changes: { deliveredAt: this.clock.now(), pdfAttached: true } };
  }

  /**
   * The PDF of the mail's version as it was sent; null while it is still being made. A send in
   * another language than the quote's (`locale` of the send) gets the PDF in the mail's language,
   * made for this mail: one message, one language.
   */
  private async attachmentFor(mail: QuoteMailRecord, pdf: QuotePdfRecord | null): Promise<MailAttachment | null> {
    if (!pdf || pdf.contentPosition < mail.sentPosition || pdf.status === 'pending' || pdf.status === 'working') return null;
    const locale = documentLocale(mail.message.locale);
    if (locale !== pdf.content.locale) {
      return { filename: pdfFileName(pdf), contentType: 'application/pdf', content: await renderQuotePdf({ ...pdf.content, locale }) };
    }
    if (pdf.status === 'done' && pdf.fileKey) {
      const content = await this.files.get(pdf.fileKey);
      if (content) return { filename: pdfFileName(pdf), contentType: 'application/pdf', content };
    }
    // failed for good, or its file is gone: the mail makes it
    return { filename: pdfFileName(pdf), contentType: 'application/pdf', content: await renderQuotePdf(pdf.content) };
  }
}
