import { join } from 'node:path';
import { Module, OnModuleInit } from '@nestjs/common';
import { DirectoryFileStore, FileStore } from '@lib/file-store';
import { OrganizationsModule } from '@lib/organizations';
import { ProjectionRegistry, ReactorRegistry } from '@lib/runtime';
import { APP_CONFIG, type AppConfig } from '@lib/shared';
import { SubmissionsModule } from '@lib/submissions';
import { QUOTE_COMMAND_HANDLERS } from './application/quote.commands';
import { QuoteExpiryScheduler } from './application/quote-expiry.scheduler';
import { createQuoteMailer, QuoteMailer } from './application/quote-mailer';
import { DocumentSignal } from './documents/document-signal';
import { FileLinks, loadFileLinkKey } from './documents/file-links';
import { QuoteDocumentsWorker } from './documents/quote-documents.worker';
import { QuoteMailJobs } from './documents/quote-mail-jobs';
import { QuotePdfJobs, QuotePdfReactor } from './documents/quote-pdf-jobs';
import { QuotePdfs } from './documents/quote-pdfs';
import { QuoteFilesController } from './http/quote-files.controller';
import { QuoteNumberAllocator } from './application/quote-number-allocator';
import { QuoteQueries } from './application/quote-queries';
import { QuoteSentMailReactor } from './application/quote-sent-mail.reactor';
import { SubmissionLifecycleReactor } from './application/submission-lifecycle.reactor';
import { QuoteWriter } from './application/quote-writer';
import { QuotesController } from './http/quotes.controller';
import { StorefrontQuotesController } from './http/storefront-quotes.controller';
import { quotesProjection } from './projections/quotes.projection';

@Module({
  imports: [OrganizationsModule, SubmissionsModule],
  controllers: [QuotesController, StorefrontQuotesController, QuoteFilesController],
  providers: [
    ...QUOTE_COMMAND_HANDLERS,
    QuoteQueries,
    QuoteWriter,
    QuoteNumberAllocator,
    QuoteSentMailReactor,
    QuotePdfReactor,
    SubmissionLifecycleReactor,
    QuotePdfJobs,
    QuoteMailJobs,
    QuotePdfs,
    DocumentSignal,
    { provide: QuoteMailer, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createQuoteMailer(config) },
    // PDFs live on this machine's disk by default; several gateways need a shared FileStore (docs/decisions/quote-pdfs-and-email.md)
    { provide: FileStore, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new DirectoryFileStore(join(config.dataDir, 'pdfs')) },
    {
      provide: FileLinks,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new FileLinks(loadFileLinkKey(config.fileLinkSecret, config.dataDir), config.publicBaseUrl, config.fileLinkTtlMs),
    },
  ],
  exports: [QuoteQueries, QuoteMailer, QuotePdfJobs, QuoteMailJobs, FileStore, DocumentSignal],
})
export class QuotesModule implements OnModuleInit {
  constructor(
    projections: ProjectionRegistry,
    reactors: ReactorRegistry,
    mail: QuoteSentMailReactor,
    pdf: QuotePdfReactor,
    lifecycle: SubmissionLifecycleReactor,
    private readonly pdfJobs: QuotePdfJobs,
    private readonly mailJobs: QuoteMailJobs,
  ) {
    projections.register(quotesProjection);
    // the PDF reactor first: a mail of the same send finds its PDF already armed
    reactors.register(pdf, mail, lifecycle);
  }

  async onModuleInit(): Promise<void> {
    await Promise.all([this.pdfJobs.ensureIndexes(), this.mailJobs.ensureIndexes()]);
  }
}

/**
 * The expiry check of quotes (QuoteExpiryScheduler). Imported by the outbox process only, so it
 * runs in exactly one place per deployment.
 */
@Module({
  imports: [QuotesModule],
  providers: [QuoteExpiryScheduler],
})
export class QuoteExpiryModule {}

/**
 * The worker that makes quote PDFs and sends quote e-mails (QuoteDocumentsWorker). Imported by
 * the outbox process only, so each is attempted from one place per deployment.
 */
@Module({
  imports: [QuotesModule],
  providers: [QuoteDocumentsWorker],
})
export class QuoteDocumentsWorkerModule {}
