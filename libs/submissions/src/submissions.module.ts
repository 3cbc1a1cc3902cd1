import { Module } from '@nestjs/common';
import { OrganizationsModule } from '@lib/organizations';
import { ProjectionRegistry } from '@lib/runtime';
import { TemplatesModule } from '@lib/templates';
import { EXTERNAL_PRICING_COMMAND_HANDLERS } from './application/external-pricing.commands';
import { SUBMISSION_COMMAND_HANDLERS } from './application/submission.commands';
import { SubmissionLookup } from './application/submission-lookup';
import { ReadModelSubmissionLookup, SubmissionQueries } from './application/submission-queries';
import { AdminSubmissionsController } from './http/admin-submissions.controller';
import { SubmissionsController } from './http/submissions.controller';
import { submissionsProjection } from './projections/submissions.projection';

@Module({
  imports: [TemplatesModule, OrganizationsModule],
  controllers: [SubmissionsController, AdminSubmissionsController],
  providers: [...SUBMISSION_COMMAND_HANDLERS, ...EXTERNAL_PRICING_COMMAND_HANDLERS, SubmissionQueries, { provide: SubmissionLookup, useClass: ReadModelSubmissionLookup }],
  exports: [SubmissionLookup, SubmissionQueries],
})
export class SubmissionsModule {
  constructor(registry: ProjectionRegistry) {
    registry.register(submissionsProjection);
  }
}
