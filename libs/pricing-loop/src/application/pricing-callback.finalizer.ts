import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { OrganizationDirectory } from '@lib/organizations';
import { ReadStore } from '@lib/read-store';
import { IssuePricingToken } from '@lib/sessions';
import { APP_CONFIG, Clock, type AppConfig } from '@lib/shared';
import { NotReadyToSend, type FinalizableDelivery, type PayloadFinalizer } from '@lib/webhooks';
import { CapabilityTokens, hashCapabilityToken } from '../domain/capability-token';
import { callbackUrl, PRICING_CALCULATED, type PricingCallback, type PricingEventData } from '../domain/pricing-event';
import { PRICING_GRANTS } from '../projections/pricing-grants.projection';

/** How long an attempt waits for a token to become checkable (the projector may run in another process). */
const GRANT_VISIBLE_TIMEOUT_MS = 5_000;
const GRANT_POLL_MS = 5;
const REDACTED = '[redacted]';

/**
 * Adds `data.callback { url, timeoutMs, generation }` to each attempt of a `pricing.calculated`
 * delivery. The capability token in the URL is derived from the delivery id and generation:
 * retries of one generation carry the same token (recorded once on the session), a redelivery a
 * new one that supersedes the old, and `generation` says which, so a receiver that deduplicates
 * on the delivery id alone does not drop the new URL. The token is recorded only as a hash, and
 * the delivery log never stores it.
 */
@Injectable()
export class PricingCallbackFinalizer implements PayloadFinalizer {
  readonly eventType = PRICING_CALCULATED;

  constructor(
    private readonly tokens: CapabilityTokens,
    private readonly commands: CommandBus,
    private readonly organizations: OrganizationDirectory,
    private readonly reads: ReadStore,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async finalize({ id, organizationId, generation, payload }: FinalizableDelivery): Promise<Record<string, unknown>> {
    const data = payload.data as unknown as PricingEventData;
    const token = this.tokens.derive(id, generation);
    const tokenHash = hashCapabilityToken(token);
    const issuedAt = this.clock.now();
    await this.commands.execute(
      new IssuePricingToken(data.session.id, {
        tokenHash,
        configHash: data.configHash,
        context: data.context,
        submissionId: data.submission?.id ?? null,
        deliveryId: id,
        generation,
        issuedAt,
        expiresAt: issuedAt + this.config.pricingTokenWindowMs,
      }),
    );
    await this.untilCheckable(tokenHash);
    const { settings } = await this.organizations.get(organizationId);
    const callback: PricingCallback = { url: callbackUrl(this.config.publicBaseUrl, token), timeoutMs: settings.pricingTimeoutMs, generation };
    return { ...payload, data: { ...data, callback } };
  }

  /** A callback block that reached a stored payload anyway keeps its shape but loses the URL. */
  redact(payload: Record<string, unknown>): Record<string, unknown> {
    const data = payload.data as { callback?: PricingCallback } | undefined;
    if (!data?.callback) return payload;
    return { ...payload, data: { ...data, callback: { ...data.callback, url: REDACTED } } };
  }

  /** The partner may call back the moment it receives the URL: the token must be checkable by then. */
  private async untilCheckable(tokenHash: string): Promise<void> {
    const deadline = Date.now() + GRANT_VISIBLE_TIMEOUT_MS;
    while (!(await this.reads.get(PRICING_GRANTS, tokenHash))) {
      // Nothing is sent, and the delivery's budget of attempts is kept for the partner's own failures (found by a review: a
      // projector stopped for 20 s made pricing events fail, marked `internal_error`, without a request ever made).
      if (Date.now() > deadline) throw new NotReadyToSend('the capability token is not visible to the read side yet');
      await new Promise((resolve) => setTimeout(resolve, GRANT_POLL_MS));
    }
  }
}
