import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { OrganizationDirectory } from '@lib/organizations';
import { EventStore } from '@lib/event-store';
import { APP_CONFIG, Clock, IdGenerator, idOfRequest, NotFound, type AppConfig } from '@lib/shared';
import { CloseSubmissionOnAcceptance, SubmissionLookup, type SubmissionView } from '@lib/submissions';
import { quoteETag, type IfMatch, type QuoteDraft } from '../domain/quote.decider';
import { QuoteNotFound } from '../domain/quote.errors';
import { quoteStream, type PricingSource, type QuoteCreated, type QuoteLineInput, type QuoteStatus, type QuoteTerms, type QuoteTotals } from '../domain/quote.events';
import { toQuoteLines } from './line-items';
import { quoteToken } from './quote-links';
import { QuoteNumberAllocator } from './quote-number-allocator';
import { hashQuoteToken, QuoteQueries } from './quote-queries';
import { QuoteWriter } from './quote-writer';

/** The body of POST /submissions/{id}/quotes, validated and with HTML stripped. */
export interface CreateQuoteRequest {
  taxRate?: number;
  validityDays?: number;
  currency?: string;
  reference?: string | null;
  notes?: string | null;
  lineItems?: QuoteLineInput[];
}

export class CreateQuote {
  constructor(
    readonly organizationId: string,
    readonly submissionId: string,
    readonly request: CreateQuoteRequest,
    readonly actor: string,
    /** the id the quote takes (a keyed request's, the same on its retries: see idempotentId); a new one when absent */
    readonly quoteId?: string,
  ) {}
}

/**
 * api-v1: without line items the quote prefers the submission's frozen external pricing when it
 * was made for the submitted configuration, else the service's own base breakdown.
 */
export function submissionLineItems(submission: SubmissionView): { lineItems: QuoteLineInput[]; pricingSource: PricingSource } {
  const external = submission.externalPricing;
  if (external && external.configHash === submission.configHash) return { lineItems: toQuoteLines(external.lineItems), pricingSource: 'external' };
  return { lineItems: toQuoteLines(submission.basePricing.lineItems), pricingSource: 'base' };
}

@CommandHandler(CreateQuote)
export class CreateQuoteHandler implements ICommandHandler<CreateQuote, string> {
  constructor(
    private readonly submissions: SubmissionLookup,
    private readonly organizations: OrganizationDirectory,
    private readonly allocator: QuoteNumberAllocator,
    private readonly events: EventStore,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, submissionId, request, actor, quoteId: requestedId }: CreateQuote): Promise<string> {
    const submission = await this.submissions.find(organizationId, submissionId);
    if (!submission) throw new NotFound('Submission');
    const organization = await this.organizations.get(organizationId);
    const defaults = organization.settings.quoteDefaults;
    const { lineItems, pricingSource } = request.lineItems ? { lineItems: request.lineItems, pricingSource: 'supplied' as const } : submissionLineItems(submission);
    const draft: QuoteDraft = {
      quoteId: await idOfRequest(requestedId, (id) => this.createdAt(id), this.clock.now(), () => this.ids.next('quo')),
      organizationId,
      submissionId,
      customer: { name: submission.customer.name, email: submission.customer.email },
      locale: submission.locale || organization.locale,
      terms: {
        // The submission's own lines are in the currency it was priced in, which the organization
        // may have changed since; lines the request brings are in the organization's.
        currency: request.currency ?? (request.lineItems ? null : submission.currency) ?? organization.currency,
        taxRate: request.taxRate ?? defaults.taxRate,
        validityDays: request.validityDays ?? defaults.validityDays,
        reference: request.reference ?? null,
        notes: request.notes ?? null,
      },
      lineItems,
      pricingSource,
      at: this.clock.now(),
    };
    const { quoteId } = await this.allocator.create(draft, actor, { requested: draft.quoteId === requestedId });
    return quoteId;
  }

  /** When the quote with this id was created; null when there is none (see idOfRequest). */
  private async createdAt(quoteId: string): Promise<number | null> {
    const [created] = (await this.events.readStream(quoteStream(quoteId), { maxCount: 1 })) as unknown as QuoteCreated[];
    return created ? created.data.at : null;
  }
}

export interface QuoteVersionResult {
  quoteId: string;
  version: number;
  etag: string;
}

/** PATCH /quotes/{id}: terms (`revise` on a sent or viewed quote) and/or externalRef. */
export class ChangeQuote {
  constructor(
    readonly organizationId: string,
    readonly quoteId: string,
    readonly terms: Partial<QuoteTerms>,
    readonly externalRef: string | null | undefined,
    readonly revise: boolean,
    readonly ifMatch: IfMatch,
    readonly actor: string,
  ) {}
}

@CommandHandler(ChangeQuote)
export class ChangeQuoteHandler implements ICommandHandler<ChangeQuote, QuoteVersionResult> {
  constructor(
    private readonly writer: QuoteWriter,
    private readonly clock: Clock,
  ) {}

  async execute(command: ChangeQuote): Promise<QuoteVersionResult> {
    const { quote } = await this.writer.execute(
      command.quoteId,
      {
        type: 'changeQuote',
        organizationId: command.organizationId,
        terms: command.terms,
        ...(command.externalRef !== undefined ? { externalRef: command.externalRef } : {}),
        revise: command.revise,
        ifMatch: command.ifMatch,
        at: this.clock.now(),
      },
      command.actor,
    );
    return { quoteId: quote.quoteId, version: quote.version, etag: quoteETag(quote) };
  }
}

export class ReplaceQuoteLineItems {
  constructor(
    readonly organizationId: string,
    readonly quoteId: string,
    readonly lineItems: QuoteLineInput[],
    readonly revise: boolean,
    readonly changeDescription: string | null,
    readonly ifMatch: IfMatch,
    readonly actor: string,
  ) {}
}

@CommandHandler(ReplaceQuoteLineItems)
export class ReplaceQuoteLineItemsHandler implements ICommandHandler<ReplaceQuoteLineItems, QuoteVersionResult & QuoteTotals> {
  constructor(
    private readonly writer: QuoteWriter,
    private readonly clock: Clock,
  ) {}

  async execute(command: ReplaceQuoteLineItems): Promise<QuoteVersionResult & QuoteTotals> {
    const { quote } = await this.writer.execute(
      command.quoteId,
      {
        type: 'replaceLineItems',
        organizationId: command.organizationId,
        lineItems: command.lineItems,
        revise: command.revise,
        changeDescription: command.changeDescription,
        ifMatch: command.ifMatch,
        at: this.clock.now(),
      },
      command.actor,
    );
    return { quoteId: quote.quoteId, version: quote.version, ...quote.totals, etag: quoteETag(quote) };
  }
}

export class SendQuote {
  constructor(
    readonly organizationId: string,
    readonly quoteId: string,
    readonly recipients: string[],
    readonly locale: string | null,
    readonly ifMatch: IfMatch,
    readonly actor: string,
    /** the keyed request's id (idempotentId): a retry of it sends nothing more */
    readonly request?: string,
  ) {}
}

export interface SentQuote {
  quoteId: string;
  status: QuoteStatus;
  sentAt: number;
  etag: string;
}

/** Length of a customer link token: 43 base62 characters, about 256 bits. */

/**
 * Sends the quote: the `quote.v1.sent` event is all that happens here. The e-mail and the
 * webhook go out from the outbox (QuoteSentMailReactor), never from the request.
 */
@CommandHandler(SendQuote)
export class SendQuoteHandler implements ICommandHandler<SendQuote, SentQuote> {
  constructor(
    private readonly writer: QuoteWriter,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(command: SendQuote): Promise<SentQuote> {
    // Derived from the quote id, not stored: the event keeps only its hash.
    const token = quoteToken(this.config, command.quoteId);
    const { quote } = await this.writer.execute(
      command.quoteId,
      {
        type: 'sendQuote',
        organizationId: command.organizationId,
        recipients: command.recipients,
        locale: command.locale,
        newLink: { tokenHash: hashQuoteToken(token), customerUrl: null },
        ifMatch: command.ifMatch,
        request: command.request,
        at: this.clock.now(),
      },
      command.actor,
    );
    return { quoteId: quote.quoteId, status: quote.status, sentAt: quote.sentAt!, etag: quoteETag(quote) };
  }
}

/** The customer opened their link (storefront). */
export class ViewQuote {
  constructor(readonly token: string) {}
}

/** `version`: the version the customer saw; without it, the customer answers the current one. */
export class AcceptQuote {
  constructor(
    readonly token: string,
    readonly name: string | null,
    readonly version?: number,
    /** the keyed request's id (idempotentId): its retry after a lost answer answers as the first did */
    readonly request?: string,
  ) {}
}

export class RejectQuote {
  constructor(
    readonly token: string,
    readonly name: string | null,
    readonly reason: string | null,
    readonly version?: number,
    /** as on AcceptQuote */
    readonly request?: string,
  ) {}
}

/** Customer actions by link: the token is resolved through its hash, and the quote checks the hash again. */
@Injectable()
abstract class CustomerActionHandler {
  constructor(
    protected readonly queries: QuoteQueries,
    protected readonly writer: QuoteWriter,
    protected readonly clock: Clock,
  ) {}

  protected async resolve(token: string): Promise<{ quoteId: string; tokenHash: string }> {
    const link = await this.queries.findLink(token);
    if (!link) throw new QuoteNotFound();
    return { quoteId: link.quoteId, tokenHash: link.id };
  }
}

@CommandHandler(ViewQuote)
export class ViewQuoteHandler extends CustomerActionHandler implements ICommandHandler<ViewQuote, void> {
  async execute({ token }: ViewQuote): Promise<void> {
    const { quoteId, tokenHash } = await this.resolve(token);
    await this.writer.execute(quoteId, { type: 'viewQuote', tokenHash, at: this.clock.now() }, `customer:${quoteId}`);
  }
}

@CommandHandler(RejectQuote)
export class RejectQuoteHandler extends CustomerActionHandler implements ICommandHandler<RejectQuote, void> {
  async execute({ token, name, reason, version, request }: RejectQuote): Promise<void> {
    const { quoteId, tokenHash } = await this.resolve(token);
    await this.writer.execute(quoteId, { type: 'rejectQuote', tokenHash, name, reason, version, request, at: this.clock.now() }, `customer:${quoteId}`);
  }
}

@CommandHandler(AcceptQuote)
export class AcceptQuoteHandler extends CustomerActionHandler implements ICommandHandler<AcceptQuote, void> {
  private readonly logger = new Logger('Quotes');

  constructor(queries: QuoteQueries, writer: QuoteWriter, clock: Clock, private readonly commands: CommandBus) {
    super(queries, writer, clock);
  }

  async execute({ token, name, version, request }: AcceptQuote): Promise<void> {
    const { quoteId, tokenHash } = await this.resolve(token);
    const actor = `customer:${quoteId}`;
    const { quote } = await this.writer.execute(quoteId, { type: 'acceptQuote', tokenHash, name, version, request, at: this.clock.now() }, actor);
    // decisions §7: an accepted quote closes its submission. The acceptance stands either way (and
    // the retry of a keyed acceptance closes it again, in case the first attempt stopped before).
    try {
      await this.commands.execute(new CloseSubmissionOnAcceptance(quote.organizationId, quote.submissionId, quoteId, actor));
    } catch (error) {
      this.logger.error(`could not close submission ${quote.submissionId} after ${quote.quoteNumber} was accepted: ${String(error)}`);
    }
  }
}

/** Dispatched by the expiry check (QuoteExpiryScheduler); both are no-ops unless due. */
export class ExpireQuote {
  constructor(readonly quoteId: string) {}
}

export class NoticeQuoteExpiringSoon {
  constructor(readonly quoteId: string) {}
}

const SYSTEM = 'system:quote-expiry';

@CommandHandler(ExpireQuote)
export class ExpireQuoteHandler implements ICommandHandler<ExpireQuote, boolean> {
  constructor(
    private readonly writer: QuoteWriter,
    private readonly clock: Clock,
  ) {}

  async execute({ quoteId }: ExpireQuote): Promise<boolean> {
    const { newEvents } = await this.writer.execute(quoteId, { type: 'expireQuote', at: this.clock.now() }, SYSTEM);
    return newEvents.length > 0;
  }
}

@CommandHandler(NoticeQuoteExpiringSoon)
export class NoticeQuoteExpiringSoonHandler implements ICommandHandler<NoticeQuoteExpiringSoon, boolean> {
  constructor(
    private readonly writer: QuoteWriter,
    private readonly clock: Clock,
  ) {}

  async execute({ quoteId }: NoticeQuoteExpiringSoon): Promise<boolean> {
    const { newEvents } = await this.writer.execute(quoteId, { type: 'noticeExpiringSoon', at: this.clock.now() }, SYSTEM);
    return newEvents.length > 0;
  }
}

export const QUOTE_COMMAND_HANDLERS = [
  CreateQuoteHandler,
  ChangeQuoteHandler,
  ReplaceQuoteLineItemsHandler,
  SendQuoteHandler,
  ViewQuoteHandler,
  AcceptQuoteHandler,
  RejectQuoteHandler,
  ExpireQuoteHandler,
  NoticeQuoteExpiringSoonHandler,
];
