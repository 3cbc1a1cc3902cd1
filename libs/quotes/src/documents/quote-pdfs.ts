import { Inject, Injectable, Logger } from '@nestjs/common';
import { FileStore } from '@lib/file-store';
import { APP_CONFIG, Clock, NotFound, type AppConfig } from '@lib/shared';
import { DocumentSignal } from './document-signal';
import { FileLinks, quotePdfPath } from './file-links';
import { pdfFileName } from './quote-documents.worker';
import { pdfStatusOf, QuotePdfJobs, rearmed, type PdfStatus, type QuotePdfRecord } from './quote-pdf-jobs';

export interface PdfView {
  status: PdfStatus | null;
  url: string | null;
}

export interface PdfFile {
  filename: string;
  bytes: Buffer;
}

/** The read side of quote PDFs: status and a fresh signed link per read, and the files themselves. */
@Injectable()
export class QuotePdfs {
  private readonly logger = new Logger('QuotePdfs');

  constructor(
    private readonly jobs: QuotePdfJobs,
    private readonly files: FileStore,
    private readonly links: FileLinks,
    private readonly clock: Clock,
    private readonly signal: DocumentSignal,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** `{ status: null, url: null }` when no PDF was ever armed for the version (quotes older than PDFs). */
  async view(quoteId: string, version: number): Promise<PdfView> {
    const record = await this.jobs.find(quoteId, version);
    if (!record) return { status: null, url: null };
    const status = pdfStatusOf(record);
    return { status, url: status === 'ready' ? this.links.sign(quotePdfPath(quoteId, version), this.clock.now()) : null };
  }

  /**
   * The ready PDF of a version; NotFound while it is not ready. A PDF recorded as ready whose file
   * is gone (a store restored without its `pdfs/` directory) is generated again from the content
   * its record keeps, and is NotFound until then.
   */
  async file(quoteId: string, version: number): Promise<PdfFile> {
    const record = await this.jobs.find(quoteId, version);
    const bytes = record?.status === 'done' && record.fileKey ? await this.files.get(record.fileKey) : null;
    if (record?.status === 'done' && !bytes) await this.regenerate(record);
    if (!record || !bytes) throw new NotFound('A ready PDF of this quote version');
    return { filename: pdfFileName(record), bytes };
  }

  private async regenerate(record: QuotePdfRecord): Promise<void> {
    const next = rearmed(record, this.clock.now(), this.config.pdfRetryScheduleMs, { lastError: 'the file was missing; generated again' });
    // Lost to another writer: that one re-armed or regenerated it.
    if (!(await this.jobs.compareAndSet(record, next))) return;
    this.logger.warn(`the PDF file of ${record.id} was missing (${record.fileKey}); it is generated again`);
    this.signal.pending('pdf');
  }
}
