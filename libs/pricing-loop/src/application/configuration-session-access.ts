import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AggregateRepository } from '@lib/event-sourcing';
import { OrganizationDirectory } from '@lib/organizations';
import { ReadStore } from '@lib/read-store';
import { isIdleExpired, loadSession, type LoadedSession, RecordSessionAdjustment, SessionExpired, SessionReader, StaleConfigHash, type RecordedAdjustment, type SessionObject } from '@lib/sessions';
import { APP_CONFIG, Clock, ForbiddenPlan, type AppConfig } from '@lib/shared';
import { priceExternalLineItems } from '@lib/submissions';
import { WebhookDeliveries } from '@lib/webhooks';
import { CapabilityTokens, hashCapabilityToken, isWellFormedCapabilityToken } from '../domain/capability-token';
import { InvalidCapabilityToken, WindowExpired } from '../domain/pricing.errors';
import { parseAdjustmentsBody } from '../http/adjustment.dto';
import { PRICING_DELIVERIES, PRICING_GRANTS, type PricingDeliveryDocument, type PricingGrantDocument } from '../projections/pricing-grants.projection';

/** What checks 1 to 4 of a write found. */
interface Admission {
  grant: PricingGrantDocument;
  currency: string;
  /** null for an `autofill` token, which answers for a submission */
  session: LoadedSession | null;
}

export interface AdjustmentApplied {
  applied: true;
  isCurrentConfiguration: boolean;
}

/**
 * The configuration-session endpoints behind a capability URL, with the checks of decisions §8
 * in exactly this order:
 *   1. token unknown, forged, malformed, or superseded by a redelivery → 401 `unauthorized`
 *   2. the organization's `externalPricingEnabled` is false            → 403 `forbidden_plan`
 *   3. the session has expired                                         → 410 `session_expired`
 *   4. the token's write window is over                                → 403 `window_expired`
 *   5. the body is invalid, or prices beyond the largest amount        → 422 `validation_error`
 *   6. the body's configHash is not the session's current one         → 409 `stale_config_hash`
 * A read (GET) makes checks 1 and 2 only: the window is a write window (api-v1 Limits: it applies
 * to PUT adjustments), and an expired session still reads, with status `expired` (decisions §7).
 * An `autofill` token answers for a submission, which never idles out, so check 3 does not apply.
 */
@Injectable()
export class ConfigurationSessionAccess {
  /** Writes admitted before their body was read, by request (see admitWrite). */
  private readonly admitted = new WeakMap<object, Admission>();

  constructor(
    private readonly reads: ReadStore,
    private readonly deliveries: WebhookDeliveries,
    private readonly tokens: CapabilityTokens,
    private readonly organizations: OrganizationDirectory,
    private readonly repository: AggregateRepository,
    private readonly sessions: SessionReader,
    private readonly commands: CommandBus,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async read(token: string): Promise<SessionObject> {
    const grant = await this.grantOf(token);
    await this.assertLivePricing(grant);
    return this.sessions.sessionObject(grant.sessionId);
  }

  /**
   * Checks 1 to 4 of a write, which need only the token: made before the body is read (see
   * BeforeBodyChecks), so that a refused caller gets its refusal whatever body it sends (an
   * unparsable, non-JSON or too large one too). Kept for the request's write.
   */
  async admitWrite(request: object, token: string): Promise<void> {
    this.admitted.set(request, await this.admit(token));
  }

  /** `request`: the request admitted by admitWrite, whose checks are then not made again except those of the clock (3 and 4). */
  async writeAdjustment(token: string, body: unknown, request?: object): Promise<AdjustmentApplied> {
    const admission = (request && this.admitted.get(request)) || (await this.admit(token));
    const { grant, currency, session } = admission;
    // The body may have taken a while to arrive: the session and the window are checked as of now.
    this.assertOpen(admission);
    const { configHash, lineItems } = await parseAdjustmentsBody(body);
    // Amounts beyond the largest one are 422 (check 5), before the hash (check 6).
    priceExternalLineItems(lineItems, currency);
    // A token prices the one configuration it was issued for; the submission's is final.
    const current = session ? session.configHash : grant.configHash;
    if (configHash !== grant.configHash || configHash !== current) throw new StaleConfigHash(current);

    // Checks 3 and 6 are made again, atomically, by the session when the write is recorded; on a
    // submitted session the write is frozen onto the submission too, in display order. An
    // auto-fill answer (no session loaded) prices the submission and is also the latest external
    // write for the session's final configHash (api-v1 `adjustments`); the session's idle time
    // does not bound it (check 3 does not apply).
    const forSubmission = session === null;
    const recorded = await this.commands.execute<RecordSessionAdjustment, RecordedAdjustment>(
      new RecordSessionAdjustment(grant.sessionId, configHash, lineItems, `pricing:${grant.deliveryId}`, forSubmission),
    );
    return { applied: true, isCurrentConfiguration: recorded.isCurrentConfiguration };
  }

  /** Checks 1 to 4. */
  private async admit(token: string): Promise<Admission> {
    const grant = await this.grantOf(token);
    const { currency } = await this.assertLivePricing(grant);
    const session = grant.context === 'autofill' ? null : await loadSession(this.repository, grant.sessionId);
    const admission = { grant, currency, session };
    this.assertOpen(admission);
    return admission;
  }

  /** Checks 3 and 4. */
  private assertOpen({ grant, session }: Admission): void {
    if (session && isIdleExpired(session.lastActivityAt, this.clock.now(), this.config.sessionIdleTtlMs)) throw new SessionExpired();
    this.assertWindowOpen(grant);
  }

  /** Check 1. The token is looked up by its hash and must also be what the current key derives. */
  private async grantOf(token: string): Promise<PricingGrantDocument> {
    if (!isWellFormedCapabilityToken(token)) throw new InvalidCapabilityToken();
    const grant = await this.reads.get<PricingGrantDocument>(PRICING_GRANTS, hashCapabilityToken(token));
    if (!grant || !this.tokens.matches(token, grant.deliveryId, grant.generation)) throw new InvalidCapabilityToken();
    // Superseded by a redelivery: as soon as it is asked for (the delivery record's generation),
    // also when no attempt of it mints the new token (no URL to send to), or by a newer token issued.
    const [record, issued] = await Promise.all([this.deliveries.find(grant.deliveryId), this.reads.get<PricingDeliveryDocument>(PRICING_DELIVERIES, grant.deliveryId)]);
    if (Math.max(record?.generation ?? 0, issued?.generation ?? 0) > grant.generation) throw new InvalidCapabilityToken();
    return grant;
  }

  /** Check 2. */
  private async assertLivePricing(grant: PricingGrantDocument) {
    const organization = await this.organizations.get(grant.organizationId);
    if (!organization.settings.externalPricingEnabled) throw new ForbiddenPlan('Live pricing (externalPricingEnabled) is off for this organization.');
    return organization;
  }

  /** Check 4: the window is open up to and including `expiresAt`. */
  private assertWindowOpen(grant: PricingGrantDocument): void {
    if (this.clock.now() > grant.expiresAt) throw new WindowExpired(grant.expiresAt);
  }
}
