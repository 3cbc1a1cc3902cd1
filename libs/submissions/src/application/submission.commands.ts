import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository } from '@lib/event-sourcing';
import { Clock } from '@lib/shared';
import { TemplateDirectory, resolveConfiguration, type Configuration } from '@lib/templates';
import { submissionDecider } from '../domain/submission.decider';
import { submissionStream } from '../domain/submission.events';
import { CreateSubmission } from './create-submission.command';
import { CloseSubmissionOnAcceptance, MarkSubmissionQuoted } from './submission-lifecycle.commands';
import type { SubmissionStatus } from './submission-lookup';

@CommandHandler(CreateSubmission)
export class CreateSubmissionHandler implements ICommandHandler<CreateSubmission, void> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly templates: TemplateDirectory,
    private readonly clock: Clock,
  ) {}

  async execute(command: CreateSubmission): Promise<void> {
    const template = await this.templates.get(command.organizationId, command.templateId);
    // The configuration was validated against this template by the session that submitted it.
    const configuration = command.configuration as unknown as Configuration;
    await this.repository.handle(
      submissionDecider,
      submissionStream(command.submissionId),
      {
        type: 'createSubmission',
        organizationId: command.organizationId,
        submissionId: command.submissionId,
        sessionId: command.sessionId,
        templateId: command.templateId,
        templateName: template.body.name,
        templateSlug: template.body.slug,
        customer: command.customer,
        configuration,
        configHash: command.configHash,
        resolvedConfiguration: resolveConfiguration(template.body, configuration),
        basePricing: command.basePricing,
        ...(command.currency !== null && { currency: command.currency }),
        externalPricing: command.externalPricing,
        locale: command.locale,
        origin: command.origin,
        at: this.clock.now(),
      },
      { metadata: { actor: command.actor } },
    );
  }
}

/** PATCH /api/v1/submissions/{id}: any status (decisions §7) and/or externalRef (null clears it). */
export class UpdateSubmission {
  constructor(
    readonly organizationId: string,
    readonly submissionId: string,
    readonly changes: { status?: SubmissionStatus; externalRef?: string | null },
    readonly actor: string,
  ) {}
}

@CommandHandler(UpdateSubmission)
export class UpdateSubmissionHandler implements ICommandHandler<UpdateSubmission, void> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, submissionId, changes, actor }: UpdateSubmission): Promise<void> {
    await this.repository.handle(
      submissionDecider,
      submissionStream(submissionId),
      { type: 'updateSubmission', organizationId, ...changes, at: this.clock.now() },
      { metadata: { actor }, what: 'The submission' },
    );
  }
}

@CommandHandler(MarkSubmissionQuoted)
export class MarkSubmissionQuotedHandler implements ICommandHandler<MarkSubmissionQuoted, void> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, submissionId, quoteId, actor }: MarkSubmissionQuoted): Promise<void> {
    await this.repository.handle(
      submissionDecider,
      submissionStream(submissionId),
      { type: 'markQuoted', organizationId, quoteId, at: this.clock.now() },
      { metadata: { actor }, what: 'The submission' },
    );
  }
}

@CommandHandler(CloseSubmissionOnAcceptance)
export class CloseSubmissionOnAcceptanceHandler implements ICommandHandler<CloseSubmissionOnAcceptance, void> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, submissionId, quoteId, actor }: CloseSubmissionOnAcceptance): Promise<void> {
    await this.repository.handle(
      submissionDecider,
      submissionStream(submissionId),
      { type: 'closeOnAcceptance', organizationId, quoteId, at: this.clock.now() },
      { metadata: { actor }, what: 'The submission' },
    );
  }
}

export const SUBMISSION_COMMAND_HANDLERS = [CreateSubmissionHandler, UpdateSubmissionHandler, MarkSubmissionQuotedHandler, CloseSubmissionOnAcceptanceHandler];
