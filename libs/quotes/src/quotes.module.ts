import { Module } from '@nestjs/common';
import { OrganizationsModule } from '@lib/organizations';
import { ProjectionRegistry, ReactorRegistry } from '@lib/runtime';
import { SubmissionsModule } from '@lib/submissions';
import { QUOTE_COMMAND_HANDLERS } from './application/quote.commands';
import { QuoteExpiryScheduler } from './application/quote-expiry.scheduler';
import { FileQuoteMailer, QuoteMailer } from './application/quote-mailer';
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
  controllers: [QuotesController, StorefrontQuotesController],
  providers: [
    ...QUOTE_COMMAND_HANDLERS,
    QuoteQueries,
    QuoteWriter,
    QuoteNumberAllocator,
    QuoteSentMailReactor,
    SubmissionLifecycleReactor,
    { provide: QuoteMailer, useClass: FileQuoteMailer },
  ],
  exports: [QuoteQueries, QuoteMailer],
})
export class QuotesModule {
  constructor(projections: ProjectionRegistry, reactors: ReactorRegistry, mail: QuoteSentMailReactor, lifecycle: SubmissionLifecycleReactor) {
    projections.register(quotesProjection);
    reactors.register(mail, lifecycle);
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
