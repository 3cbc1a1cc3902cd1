import { Module } from '@nestjs/common';
import { HttpInfrastructureModule } from '@lib/http';
import { OrganizationsModule } from '@lib/organizations';
import { ContactsModule } from '@lib/contacts';
import { LeadsModule } from '@lib/leads';
import { TemplatesModule } from '@lib/templates';
import { SessionsModule } from '@lib/sessions';
import { SubmissionsModule } from '@lib/submissions';
import { QuotesModule } from '@lib/quotes';
import { WebhooksModule } from '@lib/webhooks';
import { PricingLoopModule } from '@lib/pricing-loop';

/**
 * Every domain library. Each process imports all of them: the gateway for its controllers and
 * command handlers, the projector and the outbox for the projections and reactors they register.
 */
@Module({
  imports: [HttpInfrastructureModule, OrganizationsModule, ContactsModule, LeadsModule, TemplatesModule, SessionsModule, SubmissionsModule, QuotesModule, WebhooksModule, PricingLoopModule],
  exports: [HttpInfrastructureModule, OrganizationsModule, ContactsModule, LeadsModule, TemplatesModule, SessionsModule, SubmissionsModule, QuotesModule, WebhooksModule],
})
export class DomainModule {}
