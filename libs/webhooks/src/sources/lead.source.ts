import { Injectable } from '@nestjs/common';
import type { RecordedEvent } from '@lib/event-store';
import { LEAD_STREAM, type LeadEvent } from '@lib/leads/domain/lead.events';
import type { WebhookEventDraft, WebhookSource } from '../webhook-sources';

/** `lead.created` (decisions §9): the public contact form produced a lead. Leads carry no locale. */
@Injectable()
export class LeadWebhookSource implements WebhookSource {
  readonly name = 'leads';
  readonly filter = { streamPrefixes: [LEAD_STREAM], eventTypePrefixes: ['lead.v1.created'] };

  async toWebhookEvents(recorded: RecordedEvent): Promise<WebhookEventDraft[]> {
    const event = recorded as unknown as LeadEvent;
    if (event.type !== 'lead.v1.created') return [];
    const d = event.data;
    return [
      {
        type: 'lead.created',
        organizationId: d.organizationId,
        entityType: 'lead',
        entityId: d.leadId,
        customerLocale: null,
        fastPath: false,
        data: { lead: { id: d.leadId, name: d.name, email: d.email, phone: d.phone, message: d.message, createdAt: d.createdAt } },
      },
    ];
  }
}
