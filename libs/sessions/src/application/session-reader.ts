import { Inject, Injectable } from '@nestjs/common';
import { ReadStore } from '@lib/read-store';
import { OrganizationDirectory } from '@lib/organizations';
import { APP_CONFIG, Clock, NotFound, Unauthorized, type AppConfig } from '@lib/shared';
import { inDisplayOrder } from '@lib/submissions';
import { asRecorded, currentAdjustment, submissionAdjustment } from '../domain/session-adjustments';
import type { Adjustment } from '../domain/session.events';
import { sessionStatus } from '../domain/session.decider';
import { SESSIONS, type SessionDocument } from '../projections/sessions.projection';
import { customerTokenMatches, isCustomerTokenShaped } from './customer-token';

export interface SessionReadContext {
  now: number;
  idleTtlMs: number;
}

export interface LivePricingSettings {
  /** live pricing is on: the partner's price is shown */
  externalPricingEnabled: boolean;
  /** the organization's currency: a partner's price rounded in another one is not shown */
  currency: string;
  /** and it has a URL to ask (pricingWebhookUrl, else webhookUrl): a price may be coming */
  asksPartner: boolean;
  /** customer-facing wait for an external price (callback.timeoutMs) */
  pricingTimeoutMs: number;
}

/**
 * The configuration-session object of api-v1, plus when the session was started, last used and
 * will expire. `adjustment`: the one it shows, by default the answer for the current configHash
 * (what the partner wrote); the customer's view passes the one the customer sees.
 */
export function toSessionObject(session: SessionDocument, { now, idleTtlMs }: SessionReadContext, adjustment = currentAdjustment(session.adjustments, session.configHash)) {
  return {
    sessionId: session.id,
    organizationId: session.organizationId,
    templateId: session.templateId,
    origin: session.origin,
    status: sessionStatus(session.status, session.lastActivityAt, now, idleTtlMs),
    configuration: session.configuration,
    configHash: session.configHash,
    submissionId: session.submissionId,
    locale: session.locale,
    basePricing: session.basePricing,
    adjustments: adjustment ? asRecorded(adjustment) : null,
    createdAt: session.createdAt,
    lastActivityAt: session.lastActivityAt,
    expiresAt: session.lastActivityAt + idleTtlMs,
  };
}

/**
 * The partner's price the customer sees, if any. Before submit: the answer for the current
 * configHash, while live pricing is on (switched off, the product's own price shows again, as
 * submit will take it; the answer is kept and shows again when it is switched on) and in the
 * organization's currency (one rounded in a currency the organization has since left prices
 * nothing). Once submitted: the one that prices the submission, whatever the settings are now,
 * so the customer sees what the submission recorded.
 */
function shownAdjustment(session: SessionDocument, live: LivePricingSettings): Adjustment | null {
  if (session.status === 'submitted') return submissionAdjustment(session);
  return live.externalPricingEnabled ? currentAdjustment(session.adjustments, session.configHash, live.currency) : null;
}

/**
 * decisions §6: what the customer sees. `pricing` is the external breakdown, in display order,
 * when the partner's price shows (shownAdjustment), else the base breakdown; `awaitingExternal`
 * tells the configurator to keep waiting for a live price (live pricing on, configuration active,
 * and still within the organization's pricing timeout since it changed).
 */
export function toStorefrontSession(session: SessionDocument, context: SessionReadContext, live: LivePricingSettings) {
  const adjustment = shownAdjustment(session, live);
  const object = toSessionObject(session, context, adjustment);
  if (adjustment) {
    const { lineItems, subtotal } = adjustment;
    return { ...object, pricing: { source: 'external' as const, lineItems: inDisplayOrder(lineItems), subtotal, awaitingExternal: false } };
  }
  const awaitingExternal =
    live.externalPricingEnabled &&
    live.asksPartner &&
    object.status === 'active' &&
    session.configuredAt !== null &&
    context.now - session.configuredAt < live.pricingTimeoutMs;
  return { ...object, pricing: { source: 'base' as const, lineItems: session.basePricing.lineItems, subtotal: session.basePricing.subtotal, awaitingExternal } };
}

export type StorefrontSession = ReturnType<typeof toStorefrontSession>;
export type SessionObject = ReturnType<typeof toSessionObject>;

/**
 * When the customer's view will change by the passing of time alone: the live-pricing wait ends
 * (the view falls back to base pricing) or the session expires. null when neither is ahead.
 */
export function nextTimedChange(session: SessionDocument, view: StorefrontSession, live: LivePricingSettings): number | null {
  const moments: number[] = [];
  if (view.pricing.awaitingExternal && session.configuredAt !== null) moments.push(session.configuredAt + live.pricingTimeoutMs);
  if (view.status !== 'expired') moments.push(view.expiresAt + 1);
  return moments.length ? Math.min(...moments) : null;
}

/** Finds sessions for their customer (token checked in constant time) and presents them. */
@Injectable()
export class SessionReader {
  constructor(
    private readonly reads: ReadStore,
    private readonly organizations: OrganizationDirectory,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async find(sessionId: string): Promise<SessionDocument | null> {
    return this.reads.get<SessionDocument>(SESSIONS, sessionId);
  }

  /**
   * 401 without a well-formed token, with another session's token, and for an unknown session: a
   * token does not tell whether a session exists (until 2026-11-27 an unknown one was 404, so any
   * well-formed token probed for session ids; found by a review).
   */
  async authorize(sessionId: string, customerToken: string | null): Promise<SessionDocument> {
    if (!customerToken) throw new Unauthorized('The customer token of the session is required: Authorization: Bearer <customerToken>.');
    const session = isCustomerTokenShaped(customerToken) ? await this.find(sessionId) : null;
    if (!session || !customerTokenMatches(customerToken, session.customerTokenHash)) throw new Unauthorized('The customer token does not belong to this session.');
    return session;
  }

  isExpired(session: SessionDocument): boolean {
    return sessionStatus(session.status, session.lastActivityAt, this.clock.now(), this.config.sessionIdleTtlMs) === 'expired';
  }

  async present(sessionId: string): Promise<StorefrontSession> {
    return (await this.watchable(sessionId)).session;
  }

  /** The customer's view, and when it changes next without a new event (for the live stream). */
  async watchable(sessionId: string): Promise<{ session: StorefrontSession; changesAt: number | null }> {
    const document = await this.find(sessionId);
    if (!document) throw new NotFound('Session');
    const organization = await this.organizations.get(document.organizationId);
    const { externalPricingEnabled, pricingWebhookUrl, webhookUrl, pricingTimeoutMs } = organization.settings;
    // Live pricing with no URL to send `pricing.calculated` to asks no one: nothing to wait for.
    const live = { externalPricingEnabled, currency: organization.currency, asksPartner: (pricingWebhookUrl ?? webhookUrl) !== null, pricingTimeoutMs };
    const session = toStorefrontSession(document, this.readContext(), live);
    return { session, changesAt: nextTimedChange(document, session, live) };
  }

  /** The api-v1 configuration-session object (what the external system reads through its capability URL). */
  async sessionObject(sessionId: string): Promise<SessionObject> {
    const document = await this.find(sessionId);
    if (!document) throw new NotFound('Session');
    return toSessionObject(document, this.readContext());
  }

  private readContext(): SessionReadContext {
    return { now: this.clock.now(), idleTtlMs: this.config.sessionIdleTtlMs };
  }
}
