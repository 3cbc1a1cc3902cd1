import { Inject, Logger, Optional } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { RecordSubmissionContact } from '@lib/contacts';
import { AggregateRepository } from '@lib/event-sourcing';
import { Metrics } from '@lib/observability';
import { OrganizationDirectory } from '@lib/organizations';
import { APP_CONFIG, Clock, IdGenerator, NotFound, ValidationFailed, WriteStoredNotYetVisible, type AppConfig } from '@lib/shared';
import { CreateSubmission, FreezeExternalPricing, priceExternalLineItems, type ExternalLineInput, type SubmissionCustomer } from '@lib/submissions';
import { TemplateDirectory, configHash, priceConfiguration, validateConfiguration, type BasePricing } from '@lib/templates';
import { forDisplay, submissionAdjustment } from '../domain/session-adjustments';
import { assertCustomerMayWrite, sessionDecider, type SessionState } from '../domain/session.decider';
import { SessionNotConfigured } from '../domain/session.errors';
import { sessionStream, type Adjustment, type PricingTokenGrant, type SessionEvent, type SessionLocale, type SessionOrigin } from '../domain/session.events';
import { generateCustomerToken, hashCustomerToken } from './customer-token';

const customerActor = (sessionId: string) => `customer:${sessionId}`;

export type LoadedSession = SessionState & { sessionId: string; organizationId: string; templateId: string; locale: SessionLocale; origin: SessionOrigin };

export async function loadSession(repository: AggregateRepository, sessionId: string): Promise<LoadedSession> {
  const { state } = await repository.load(sessionDecider, sessionStream(sessionId));
  if (!state.exists) throw new NotFound('Session');
  return state as LoadedSession;
}

/**
 * What follows a submitted session: the submission and the customer's contact. Both commands are
 * idempotent, so the outbox's follow-up reactor can run this again after a crash between the
 * session write and these dispatches.
 */
export async function completeSubmission(
  commands: CommandBus,
  session: Pick<LoadedSession, 'organizationId' | 'templateId' | 'locale' | 'origin'> & { sessionId: string },
  submitted: Extract<SessionEvent, { type: 'session.v1.submitted' }>['data'],
  actor: string,
): Promise<void> {
  await commands.execute(
    new CreateSubmission(
      session.organizationId,
      submitted.submissionId,
      session.sessionId,
      session.templateId,
      submitted.customer,
      submitted.configuration as unknown as Record<string, unknown>,
      submitted.configHash,
      submitted.basePricing,
      submitted.currency ?? null,
      submitted.externalPricing,
      session.locale,
      session.origin,
      actor,
    ),
  );
  await commands.execute(new RecordSubmissionContact(session.organizationId, submitted.submissionId, submitted.customer, actor));
}

/** decisions §6: starts a configuration session on an organization's template; the locale defaults to the organization's. */
export class StartSession {
  constructor(
    readonly organizationId: string,
    readonly templateId: string,
    readonly origin: SessionOrigin = 'storefront',
    readonly locale?: SessionLocale,
  ) {}
}

export interface StartedSession {
  sessionId: string;
  /** shown only here; the session stores its hash */
  customerToken: string;
}

@CommandHandler(StartSession)
export class StartSessionHandler implements ICommandHandler<StartSession, StartedSession> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly organizations: OrganizationDirectory,
    private readonly templates: TemplateDirectory,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, templateId, origin, locale }: StartSession): Promise<StartedSession> {
    const organization = await this.organizations.get(organizationId);
    await this.templates.get(organizationId, templateId);
    const sessionId = this.ids.next('ses');
    const customerToken = generateCustomerToken();
    await this.repository.handle(
      sessionDecider,
      sessionStream(sessionId),
      {
        type: 'startSession',
        sessionId,
        organizationId,
        templateId,
        origin,
        locale: locale ?? organization.locale,
        customerTokenHash: hashCustomerToken(customerToken),
        at: this.clock.now(),
      },
      { metadata: { actor: customerActor(sessionId) } },
    );
    return { sessionId, customerToken };
  }
}

/** The customer saves a configuration (decisions §5): validated and priced against the session's template. */
export class ChangeSessionConfiguration {
  constructor(
    readonly sessionId: string,
    /** unvalidated body; the handler validates it and fails with ValidationFailed */
    readonly configuration: unknown,
  ) {}
}

export interface ConfigurationChangeResult {
  configHash: string;
  /** false when the configuration hashes as before: nothing was recorded */
  changed: boolean;
}

@CommandHandler(ChangeSessionConfiguration)
export class ChangeSessionConfigurationHandler implements ICommandHandler<ChangeSessionConfiguration, ConfigurationChangeResult> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly organizations: OrganizationDirectory,
    private readonly templates: TemplateDirectory,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async execute({ sessionId, configuration: input }: ChangeSessionConfiguration): Promise<ConfigurationChangeResult> {
    const session = await loadSession(this.repository, sessionId);
    const at = this.clock.now();
    const idleTtlMs = this.config.sessionIdleTtlMs;
    // An expired or submitted session refuses the write whatever the body holds.
    assertCustomerMayWrite(session, at, idleTtlMs);
    const template = await this.templates.get(session.organizationId, session.templateId);
    const { configuration, errors } = validateConfiguration(template.body, input);
    if (!configuration) throw new ValidationFailed(errors);
    const organization = await this.organizations.get(session.organizationId);
    const hash = configHash(configuration);
    const basePricing = priceConfiguration(template.body, template.id, configuration, organization.currency, session.locale ?? undefined);
    const { newEvents } = await this.repository.handle(
      sessionDecider,
      sessionStream(sessionId),
      { type: 'changeConfiguration', configuration, configHash: hash, basePricing, at, idleTtlMs },
      { metadata: { actor: customerActor(sessionId) }, what: 'The session' },
    );
    return { configHash: hash, changed: newEvents.length > 0 };
  }
}

/**
 * A template or the organization's currency changed since the save can take the price past the
 * largest amount or the most lines: refused like an invalid configuration, with its paths under
 * `configuration`.
 */
function priceForSubmit(price: () => BasePricing): BasePricing {
  try {
    return price();
  } catch (error) {
    // The price's refusals (too large an amount, too many lines) name the configuration's fields.
    throw error instanceof ValidationFailed ? error.under('configuration') : error;
  }
}

/**
 * The customer submits (api-v1 session lifecycle): the configuration is checked and priced again
 * against the template as it is now, the session moves to `submitted` (freezing a matching
 * adjustment), then the submission and the customer's contact are recorded. The session is
 * written first: its expected revision is what makes a double submit impossible.
 */
export class SubmitSession {
  constructor(
    readonly sessionId: string,
    /** validated and plain-text at the edge */
    readonly customer: SubmissionCustomer,
  ) {}
}

@CommandHandler(SubmitSession)
export class SubmitSessionHandler implements ICommandHandler<SubmitSession, { submissionId: string }> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly commands: CommandBus,
    private readonly organizations: OrganizationDirectory,
    private readonly templates: TemplateDirectory,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async execute({ sessionId, customer }: SubmitSession): Promise<{ submissionId: string }> {
    const session = await loadSession(this.repository, sessionId);
    const at = this.clock.now();
    const idleTtlMs = this.config.sessionIdleTtlMs;
    assertCustomerMayWrite(session, at, idleTtlMs);
    if (!session.configuration || !session.configHash) throw new SessionNotConfigured();

    const template = await this.templates.get(session.organizationId, session.templateId);
    const { configuration, errors } = validateConfiguration(template.body, session.configuration);
    if (!configuration) {
      throw new ValidationFailed(
        errors.map((e) => ({ path: e.path ? `configuration.${e.path}` : 'configuration', message: e.message })),
        'The configuration is no longer valid for the template; change it and submit again.',
      );
    }
    const organization = await this.organizations.get(session.organizationId);
    const basePricing = priceForSubmit(() => priceConfiguration(template.body, template.id, configuration, organization.currency, session.locale ?? undefined));
    const submissionId = this.ids.next('sub');
    const actor = customerActor(sessionId);

    try {
      const { newEvents } = await this.repository.handle(
        sessionDecider,
        sessionStream(sessionId),
        { type: 'submitSession', submissionId, customer, configHash: session.configHash, basePricing, currency: organization.currency, livePricing: organization.settings.externalPricingEnabled, at, idleTtlMs },
        { metadata: { actor }, what: 'The session' },
      );
      const submitted = newEvents[0];
      if (submitted?.type !== 'session.v1.submitted') throw new Error('submitting a session produced no submitted event');
      await completeSubmission(this.commands, session, submitted.data, actor);
    } catch (error) {
      // Submitted, but the read side lags: the customer is told which submission they made (the
      // answer is kept under the Idempotency-Key); the outbox's follow-up completes what is left.
      if (error instanceof WriteStoredNotYetVisible) throw new WriteStoredNotYetVisible({ submissionId });
      throw error;
    }
    return { submissionId };
  }
}

/** One line of an external price breakdown, validated at the edge (api-v1 adjustment line item). */
export type AdjustmentLineInput = ExternalLineInput;

/**
 * On a submitted session, the adjustment for the final configHash belongs on the submission too
 * (api-v1 session lifecycle: answering the `submission` event still freezes). Idempotent; the
 * outbox's follow-up reactor runs it again for every adjustment, in case this process died first
 * or the submission did not exist yet.
 */
export async function freezeOntoSubmission(commands: CommandBus, session: SessionState, actor: string): Promise<void> {
  if (!session.submissionId || !session.organizationId) return;
  const adjustment = submissionAdjustment(session);
  if (!adjustment) return;
  await commands.execute(new FreezeExternalPricing(session.organizationId, session.submissionId, forDisplay(adjustment), actor));
}

/**
 * Records the external system's breakdown for a configHash (api-v1 PUT adjustments, full replace).
 * Capability-token, plan and window checks belong to the caller; this enforces the session rules:
 * 410 when expired, 409 `stale_config_hash` when the hash is no longer current.
 */
export class RecordSessionAdjustment {
  constructor(
    readonly sessionId: string,
    readonly configHash: string,
    readonly lineItems: AdjustmentLineInput[],
    readonly actor: string,
    /** an answer for the submitted session's submission (auto-fill), which the session's idle time does not bound */
    readonly forSubmission = false,
  ) {}
}

export interface RecordedAdjustment extends Adjustment {
  /** whether the written hash is the session's current one (it always is once recorded: a stale hash is refused) */
  isCurrentConfiguration: boolean;
}

@CommandHandler(RecordSessionAdjustment)
export class RecordSessionAdjustmentHandler implements ICommandHandler<RecordSessionAdjustment, RecordedAdjustment> {
  private readonly logger = new Logger('Sessions');

  constructor(
    private readonly repository: AggregateRepository,
    private readonly commands: CommandBus,
    private readonly organizations: OrganizationDirectory,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  async execute({ sessionId, configHash: hash, lineItems, actor, forSubmission }: RecordSessionAdjustment): Promise<RecordedAdjustment> {
    const session = await loadSession(this.repository, sessionId);
    // An answer for a submission is in the currency it was priced in, whatever the organization's is now.
    const currency = session.submittedCurrency ?? (await this.organizations.get(session.organizationId)).currency;
    const { lineItems: items, subtotal } = priceExternalLineItems(lineItems, currency);
    const at = this.clock.now();
    const { state } = await this.repository.handle(
      sessionDecider,
      sessionStream(sessionId),
      { type: 'recordAdjustment', configHash: hash, lineItems: items, subtotal, currency, at, idleTtlMs: this.config.sessionIdleTtlMs, forSubmission },
      { metadata: { actor }, what: 'The session' },
    );
    // What the customer waits for: from the configuration change to the partner's first answer
    // for it, on a session the customer is configuring (an answer for a submission or an auto-fill
    // is no customer's wait: the organization asked, maybe hours later).
    const first = !session.adjustments.some((adjustment) => adjustment.configHash === hash);
    const configuring = state.submissionId === null && !forSubmission;
    if (first && configuring && state.configHash === hash && state.configuredAt !== null) this.metrics?.pricingLoop('adjustment_received', at - state.configuredAt);
    try {
      await freezeOntoSubmission(this.commands, state, actor);
    } catch (error) {
      // The session holds the answer; the follow-up reactor freezes it once the submission exists.
      if (!(error instanceof NotFound)) throw error;
      this.logger.warn(`submission ${state.submissionId} not there yet; the adjustment is frozen by the outbox`);
    }
    return { configHash: hash, lineItems: items, subtotal, receivedAt: at, isCurrentConfiguration: state.configHash === hash };
  }
}

/**
 * Records that a capability token was handed out for this session (decisions §8). Dispatched by
 * live pricing before each delivery attempt; the same delivery generation is recorded once.
 */
export class IssuePricingToken {
  constructor(
    readonly sessionId: string,
    readonly grant: PricingTokenGrant,
  ) {}
}

@CommandHandler(IssuePricingToken)
export class IssuePricingTokenHandler implements ICommandHandler<IssuePricingToken, void> {
  constructor(private readonly repository: AggregateRepository) {}

  async execute({ sessionId, grant }: IssuePricingToken): Promise<void> {
    await this.repository.handle(
      sessionDecider,
      sessionStream(sessionId),
      { type: 'issuePricingToken', ...grant },
      { metadata: { actor: `pricing:${grant.deliveryId}` }, what: 'The session' },
    );
  }
}

export const SESSION_COMMAND_HANDLERS = [
  StartSessionHandler,
  ChangeSessionConfigurationHandler,
  SubmitSessionHandler,
  RecordSessionAdjustmentHandler,
  IssuePricingTokenHandler,
];
