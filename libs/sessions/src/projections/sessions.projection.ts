import { collectionName, type Projection, type ProjectedDocument } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import type { PricingBreakdown } from '@lib/submissions';
import type { Configuration } from '@lib/templates';
import type { StoredSessionStatus } from '../domain/session.decider';
import { adjustmentOf, withAdjustment } from '../domain/session-adjustments';
import { SESSION_STREAM, type Adjustment, type SessionEvent, type SessionLocale, type SessionOrigin } from '../domain/session.events';

export interface SessionDocument extends ProjectedDocument {
  id: string;
  organizationId: string;
  templateId: string;
  origin: SessionOrigin;
  locale: SessionLocale;
  customerTokenHash: string;
  /** stored status; `expired` is derived at read time from lastActivityAt */
  status: StoredSessionStatus;
  configuration: Configuration | null;
  configHash: string | null;
  /** when the current configHash was set: the customer-facing wait for a live price runs from here */
  configuredAt: number | null;
  basePricing: PricingBreakdown;
  /** the latest external write per configHash, most recent hashes only (api-v1 shows the current hash's) */
  adjustments: Adjustment[];
  submissionId: string | null;
  /** the currency the submission was priced in; null before submit or when not recorded (before 2026-11-27) */
  submittedCurrency: string | null;
  /** live pricing was on at submit (true before submit, as in the decider's state; read only once submitted) */
  submittedWithLivePricing: boolean;
  /** the latest answer to an auto-fill, kept apart from `adjustments` (session-adjustments.ts submissionAdjustment) */
  autofillAnswer: Adjustment | null;
  createdAt: number;
  lastActivityAt: number;
  updatedAt: number;
}

export const sessionsProjection: Projection = {
  name: 'sessions',
  // v2: adjustments are kept per configHash (v1 kept only the latest, so going back to a
  // configuration already priced showed none). v3: what decides the submission's price is kept
  // (currency and live pricing at submit, the auto-fill's answer), so a submitted session shows
  // the price its submission recorded (session-adjustments.ts submissionAdjustment).
  version: 3,
  collections: {
    sessions: [{ fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'lastActivityAt', direction: 'desc' }, { field: 'id', direction: 'desc' }] }],
  },
  filter: { streamPrefixes: [SESSION_STREAM] },
  async handle(recorded: RecordedEvent, context) {
    const event = recorded as unknown as SessionEvent;
    if (event.type === 'session.v1.started') {
      const { sessionId, organizationId, templateId, origin, locale, customerTokenHash, at } = event.data;
      context.put('sessions', {
        id: sessionId,
        organizationId,
        templateId,
        origin,
        locale,
        customerTokenHash,
        status: 'active',
        configuration: null,
        configHash: null,
        configuredAt: null,
        basePricing: { lineItems: [], subtotal: 0 },
        adjustments: [],
        submissionId: null,
        submittedCurrency: null,
        submittedWithLivePricing: true,
        autofillAnswer: null,
        createdAt: at,
        lastActivityAt: at,
        updatedAt: at,
      } satisfies SessionDocument);
      return;
    }
    // Handing out a capability token changes nothing the session object shows.
    if (event.type === 'session.v1.pricingTokenIssued') return;
    const session = await context.get<SessionDocument>('sessions', event.data.sessionId);
    if (!session) return;
    const next: SessionDocument = { ...session, updatedAt: event.data.at };
    switch (event.type) {
      case 'session.v1.configurationChanged':
        next.configuration = event.data.configuration;
        next.configHash = event.data.configHash;
        next.configuredAt = event.data.at;
        next.basePricing = event.data.basePricing;
        next.lastActivityAt = event.data.at;
        break;
      case 'session.v1.adjustmentReceived':
        next.adjustments = withAdjustment(session.adjustments, adjustmentOf(event));
        if (event.data.forSubmission) next.autofillAnswer = adjustmentOf(event);
        break;
      case 'session.v1.submitted':
        next.status = 'submitted';
        next.submissionId = event.data.submissionId;
        next.submittedCurrency = event.data.currency ?? null;
        next.submittedWithLivePricing = event.data.livePricing ?? true;
        next.basePricing = event.data.basePricing;
        next.lastActivityAt = event.data.at;
        break;
    }
    context.put('sessions', next);
  },
};

export const SESSIONS = collectionName(sessionsProjection, 'sessions');
