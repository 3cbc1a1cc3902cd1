import { Module } from '@nestjs/common';
import { OrganizationsModule } from '@lib/organizations';
import { QuotesModule } from '@lib/quotes';
import { SubmissionsModule } from '@lib/submissions';
import { CustomerPagesController } from './http/customer-pages.controller';
import { TrailingSlashRedirects } from './http/trailing-slash-redirects';

/** The customer pages (configurator, quote, contact form); served by the gateway only. */
@Module({
  imports: [OrganizationsModule, QuotesModule, SubmissionsModule],
  controllers: [CustomerPagesController],
  providers: [TrailingSlashRedirects],
})
export class WebModule {}
