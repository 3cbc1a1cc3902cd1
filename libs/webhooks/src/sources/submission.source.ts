import { Injectable } from '@nestjs/common';
import type { RecordedEvent } from '@lib/event-store';
import { SUBMISSION_STREAM, type SubmissionEvent } from '@lib/submissions/domain/submission.events';
import type { WebhookEventDraft, WebhookSource } from '../webhook-sources';

/**
 * `submission.created` (decisions §9). The domain event carries everything as it was at submit
 * time (template name and slug, the frozen external pricing), so nothing else is read.
 */
@Injectable()
export class SubmissionWebhookSource implements WebhookSource {
  readonly name = 'submissions';
  readonly filter = { streamPrefixes: [SUBMISSION_STREAM], eventTypePrefixes: ['submission.v1.created'] };

  async toWebhookEvents(recorded: RecordedEvent): Promise<WebhookEventDraft[]> {
    const event = recorded as unknown as SubmissionEvent;
    if (event.type !== 'submission.v1.created') return [];
    const d = event.data;
    const external = d.externalPricing;
    return [
      {
        type: 'submission.created',
        organizationId: d.organizationId,
        entityType: 'submission',
        entityId: d.submissionId,
        customerLocale: d.locale ?? null,
        fastPath: false,
        data: {
          submission: { id: d.submissionId, createdAt: d.at },
          customer: { name: d.customer.name, email: d.customer.email, phone: d.customer.phone, companyName: d.customer.companyName },
          template: { id: d.templateId, name: d.templateName, slug: d.templateSlug },
          configuration: { width: d.configuration.width, height: d.configuration.height, componentCount: d.configuration.components.length },
          pricing: external
            ? { source: 'external', configHash: external.configHash, lineItems: external.lineItems, subtotal: external.subtotal }
            : { source: 'base', subtotal: d.basePricing.subtotal },
        },
      },
    ];
  }
}
