import { Injectable } from '@nestjs/common';
import { AggregateRepository } from '@lib/event-sourcing';
import { EventStore, type RecordedEvent } from '@lib/event-store';
import { OrganizationDirectory } from '@lib/organizations';
import { loadSession, SESSION_STREAM, type PricingContext, type SessionEvent } from '@lib/sessions';
import { SUBMISSION_STREAM, submissionStream, type PricingBreakdown, type SubmissionCreatedData, type SubmissionEvent } from '@lib/submissions';
import type { Configuration } from '@lib/templates';
import type { WebhookEventDraft, WebhookSource } from '@lib/webhooks';
import { PRICING_CALCULATED, type PricingEventData } from '../domain/pricing-event';

/**
 * `pricing.calculated` (api-v1 Events), only while the organization has live pricing on:
 * - a new configHash of an active session → context `configuration`;
 * - a submit that froze no adjustment → context `submission`;
 * - an organization user's auto-fill request → context `autofill`.
 * The callback with its capability URL is added per attempt by the finalizer, never here.
 */
@Injectable()
export class PricingWebhookSource implements WebhookSource {
  readonly name = 'pricing';
  readonly filter = {
    streamPrefixes: [SESSION_STREAM, SUBMISSION_STREAM],
    eventTypePrefixes: ['session.v1.configurationChanged', 'session.v1.submitted', 'submission.v1.autofillRequested'],
  };

  constructor(
    private readonly organizations: OrganizationDirectory,
    private readonly repository: AggregateRepository,
    private readonly events: EventStore,
  ) {}

  async toWebhookEvents(recorded: RecordedEvent): Promise<WebhookEventDraft[]> {
    const event = recorded as unknown as SessionEvent | SubmissionEvent;
    const organization = await this.organizations.find(event.data.organizationId);
    if (!organization?.settings.externalPricingEnabled) return [];
    switch (event.type) {
      case 'session.v1.configurationChanged': {
        // Only the configuration the customer is still looking at: a newer one has its own event,
        // and a submitted one is covered by the submit (frozen, or context `submission`).
        const session = await loadSession(this.repository, event.data.sessionId);
        if (session.status !== 'active' || session.configHash !== event.data.configHash) return [];
        return [draft('configuration', event.data, event.data.locale)];
      }
      case 'session.v1.submitted': {
        if (event.data.externalPricing) return [];
        const session = await loadSession(this.repository, event.data.sessionId);
        return [draft('submission', event.data, session.locale)];
      }
      case 'submission.v1.autofillRequested': {
        const [created] = await this.events.readStream(submissionStream(event.data.submissionId), { maxCount: 1 });
        if (created?.type !== 'submission.v1.created') return [];
        const submission = created.data as SubmissionCreatedData;
        return [draft('autofill', submission, submission.locale)];
      }
      default:
        return [];
    }
  }
}

/** What the event is about, as the session and submission events all carry it. */
interface PricedConfiguration {
  organizationId: string;
  sessionId: string;
  templateId: string;
  configHash: string;
  basePricing: PricingBreakdown;
  configuration: Configuration;
  /** once submitted */
  submissionId?: string;
}

function draft(context: PricingContext, subject: PricedConfiguration, customerLocale: string | null): WebhookEventDraft {
  const { organizationId, sessionId, templateId, configHash, basePricing, configuration, submissionId } = subject;
  const data: PricingEventData = {
    context,
    configHash,
    basePricing,
    configuration,
    template: { id: templateId },
    session: { id: sessionId },
    ...(submissionId && { submission: { id: submissionId } }),
  };
  // The delivery log's subject: the session while it is being configured, the submission after.
  const [entityType, entityId] = submissionId ? ['submission', submissionId] : ['session', sessionId];
  return { type: PRICING_CALCULATED, organizationId, entityType, entityId, customerLocale, fastPath: true, data: { ...data } };
}
