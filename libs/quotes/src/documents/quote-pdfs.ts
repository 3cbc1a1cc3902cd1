import { Injectable } from '@nestjs/common';
import { FileStore } from '@lib/file-store';
import { Clock, NotFound } from '@lib/shared';
import { FileLinks, quotePdfPath } from './file-links';
import { pdfFileName } from './quote-documents.worker';
import { pdfStatusOf, QuotePdfJobs, type PdfStatus } from './quote-pdf-jobs';

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
  constructor(
    private readonly jobs: QuotePdfJobs,
    private readonly files: FileStore,
    private readonly links: FileLinks,
    private readonly clock: Clock,
  ) {}

  /** `{ status: null, url: null }` when no PDF was ever armed for the version (quotes older than PDFs). */
  async view(quoteId: string, version: number): Promise<PdfView> {
    const record = await this.jobs.find(quoteId, version);
    if (!record) return { status: null, url: null };
    const status = pdfStatusOf(record);
    return { status, url: status === 'ready' ? this.links.sign(quotePdfPath(quoteId, version), this.clock.now()) : null };
  }

  /** The ready PDF of a version; NotFound while it is not ready. */
  async file(quoteId: string, version: number): Promise<PdfFile> {
    const record = await this.jobs.find(quoteId, version);
    const bytes = record?.status === 'done' && record.fileKey ? await this.files.get(record.fileKey) : null;
    if (!record || !bytes) throw new NotFound('A ready PDF of this quote version');
    return { filename: pdfFileName(record), bytes };
  }
}
