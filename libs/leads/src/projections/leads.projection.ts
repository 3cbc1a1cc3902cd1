import { collectionName, type Projection, type ProjectedDocument } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import { LEAD_STREAM, type LeadEvent, type LeadStatus } from '../domain/lead.events';

/** One document per lead: the api-v1 Lead plus its organization. */
export interface LeadDocument extends ProjectedDocument {
  id: string;
  organizationId: string;
  name: string;
  email: string;
  phone: string | null;
  message: string;
  status: LeadStatus;
  createdAt: number;
  updatedAt: number;
}

export const leadsProjection: Projection = {
  name: 'leads',
  version: 1,
  collections: {
    // GET /leads (newest first), optionally by status
    leads: [
      { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }] },
      { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'status', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }] },
    ],
  },
  filter: { streamPrefixes: [LEAD_STREAM] },
  async handle(recorded: RecordedEvent, context) {
    const event = recorded as unknown as LeadEvent;
    switch (event.type) {
      case 'lead.v1.created': {
        const { organizationId, leadId, name, email, phone, message, createdAt } = event.data;
        context.put('leads', { id: leadId, organizationId, name, email, phone, message, status: 'new', createdAt, updatedAt: createdAt } satisfies LeadDocument);
        return;
      }
      case 'lead.v1.statusChanged': {
        const lead = await context.get<LeadDocument>('leads', event.data.leadId);
        if (lead) context.put('leads', { ...lead, status: event.data.to, updatedAt: event.data.at });
        return;
      }
    }
  },
};

export const LEADS = collectionName(leadsProjection, 'leads');
