import { Module } from '@nestjs/common';
import { ProjectionRegistry } from '@lib/runtime';
import { TemplatesModule } from '@lib/templates';
import { SUBMISSION_COMMAND_HANDLERS } from './application/submission.commands';
import { SubmissionLookup } from './application/submission-lookup';
import { ReadModelSubmissionLookup, SubmissionQueries } from './application/submission-queries';
import { SubmissionsController } from './http/submissions.controller';
import { submissionsProjection } from './projections/submissions.projection';

@Module({
  imports: [TemplatesModule],
  controllers: [SubmissionsController],
  providers: [...SUBMISSION_COMMAND_HANDLERS, SubmissionQueries, { provide: SubmissionLookup, useClass: ReadModelSubmissionLookup }],
  exports: [SubmissionLookup, SubmissionQueries],
})
export class SubmissionsModule {
  constructor(registry: ProjectionRegistry) {
    registry.register(submissionsProjection);
  }
}
