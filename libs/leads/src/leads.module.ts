import { Module } from '@nestjs/common';
import { OrganizationsModule } from '@lib/organizations';
import { ProjectionRegistry } from '@lib/runtime';
import { ChangeLeadStatusHandler, SubmitLeadHandler } from './application/lead.commands';
import { LeadDirectory } from './application/lead-directory';
import { AdminLeadsController } from './http/admin-leads.controller';
import { LeadsController } from './http/leads.controller';
import { StorefrontLeadsController } from './http/storefront-leads.controller';
import { leadsProjection } from './projections/leads.projection';

@Module({
  imports: [OrganizationsModule],
  controllers: [LeadsController, StorefrontLeadsController, AdminLeadsController],
  providers: [LeadDirectory, SubmitLeadHandler, ChangeLeadStatusHandler],
  exports: [LeadDirectory],
})
export class LeadsModule {
  constructor(registry: ProjectionRegistry) {
    registry.register(leadsProjection);
  }
}
