import { Module } from '@nestjs/common';
import { OrganizationsModule } from '@lib/organizations';
import { QuotesModule } from '@lib/quotes';
import { SubmissionsModule } from '@lib/submissions';
import { CustomerPagesController } from './http/customer-pages.controller';

/** The customer pages (configurator, quote, contact form); served by the gateway only. */
@Module({
  imports: [OrganizationsModule, QuotesModule, SubmissionsModule],
  controllers: [CustomerPagesController],
})
export class WebModule {}
