import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository } from '@lib/event-sourcing';
import { Clock, IdGenerator, idOfRequest } from '@lib/shared';
import { leadDecider } from '../domain/lead.decider';
import { LeadNotFound } from '../domain/lead.errors';
import { isLeadId, leadStream, type LeadEnquiry, type LeadStatus } from '../domain/lead.events';
import { LeadDirectory, type Lead } from './lead-directory';

/** The public contact form of an organization produced an enquiry. */
export class SubmitLead {
  constructor(
    readonly organizationId: string,
    readonly enquiry: LeadEnquiry,
    readonly actor: string,
    /** the id the lead takes (a keyed request's, the same on its retries: see idempotentId); a new one when absent */
    readonly leadId?: string,
  ) {}
}

@CommandHandler(SubmitLead)
export class SubmitLeadHandler implements ICommandHandler<SubmitLead, string> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, enquiry, actor, leadId: requestedId }: SubmitLead): Promise<string> {
    // A retry whose first attempt made the lead finds it (the decider makes it once) and answers
    // with it; the same request a day later makes a new lead.
    const leadId = await idOfRequest(requestedId, (id) => this.createdAt(id), this.clock.now(), () => this.ids.next('lead'));
    await this.repository.handle(
      leadDecider,
      leadStream(leadId),
      { type: 'createLead', organizationId, leadId, enquiry, at: this.clock.now() },
      { metadata: { actor }, what: 'The lead', made: { leadId } },
    );
    return leadId;
  }

  /** When the lead with this id was created; null when there is none (see idOfRequest). */
  private async createdAt(leadId: string): Promise<number | null> {
    return (await this.repository.load(leadDecider, leadStream(leadId))).state.createdAt;
  }
}

/** Moves a lead along new → contacted → closed (the app's lifecycle, admin API). */
export class ChangeLeadStatus {
  constructor(
    readonly organizationId: string,
    readonly leadId: string,
    readonly status: LeadStatus,
    readonly actor: string,
  ) {}
}

@CommandHandler(ChangeLeadStatus)
export class ChangeLeadStatusHandler implements ICommandHandler<ChangeLeadStatus, Lead> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly directory: LeadDirectory,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, leadId, status, actor }: ChangeLeadStatus): Promise<Lead> {
    if (!isLeadId(leadId)) throw new LeadNotFound();
    await this.repository.handle(
      leadDecider,
      leadStream(leadId),
      { type: 'changeLeadStatus', organizationId, status, at: this.clock.now() },
      { metadata: { actor }, what: 'The lead' },
    );
    return this.directory.get(organizationId, leadId);
  }
}
