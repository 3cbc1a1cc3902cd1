import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository } from '@lib/event-sourcing';
import { OrganizationDirectory } from '@lib/organizations';
import { Clock, ForbiddenPlan, NotFound } from '@lib/shared';
import { submissionDecider } from '../domain/submission.decider';
import { submissionStream } from '../domain/submission.events';
import type { FrozenPricing } from '../domain/submission.types';

/**
 * api-v1 session lifecycle: a live-pricing answer for the final configuration that arrives after
 * submit is frozen onto the submission (and a later answer for it replaces the earlier one).
 * Idempotent: the same answer again, or an older one replayed late, changes nothing.
 */
export class FreezeExternalPricing {
  constructor(
    readonly organizationId: string,
    readonly submissionId: string,
    readonly externalPricing: FrozenPricing,
    readonly actor: string,
  ) {}
}

@CommandHandler(FreezeExternalPricing)
export class FreezeExternalPricingHandler implements ICommandHandler<FreezeExternalPricing, void> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, submissionId, externalPricing, actor }: FreezeExternalPricing): Promise<void> {
    await this.repository.handle(
      submissionDecider,
      submissionStream(submissionId),
      { type: 'freezeExternalPricing', organizationId, externalPricing, at: this.clock.now() },
      { metadata: { actor }, what: 'The submission' },
    );
  }
}

/**
 * decisions §4: an organization user asks for a live price of a submission to auto-fill a quote.
 * Recorded as an event; live pricing turns it into `pricing.calculated` with context `autofill`.
 */
export class RequestAutofill {
  constructor(
    readonly organizationId: string,
    readonly submissionId: string,
    readonly actor: string,
    /** the keyed request's id (idempotentId): its retry after a lost answer asks the partner nothing more */
    readonly request?: string,
  ) {}
}

@CommandHandler(RequestAutofill)
export class RequestAutofillHandler implements ICommandHandler<RequestAutofill, void> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly organizations: OrganizationDirectory,
    private readonly clock: Clock,
  ) {}

  /** 404 for an unknown organization or submission, then 403 `forbidden_plan` while live pricing is off. */
  async execute({ organizationId, submissionId, actor, request }: RequestAutofill): Promise<void> {
    const organization = await this.organizations.get(organizationId);
    const { state } = await this.repository.load(submissionDecider, submissionStream(submissionId));
    if (!state.exists || state.organizationId !== organizationId) throw new NotFound('Submission');
    if (!organization.settings.externalPricingEnabled) throw new ForbiddenPlan('Live pricing (externalPricingEnabled) is off for this organization.');
    await this.repository.handle(
      submissionDecider,
      submissionStream(submissionId),
      { type: 'requestAutofill', organizationId, request, at: this.clock.now() },
      { metadata: { actor }, what: 'The submission' },
    );
  }
}

export const EXTERNAL_PRICING_COMMAND_HANDLERS = [FreezeExternalPricingHandler, RequestAutofillHandler];
