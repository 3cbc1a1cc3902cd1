import { collectionName, type Projection, type ProjectedDocument } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import type { TemplateBody } from '../domain';
import { TEMPLATE_STREAM, type TemplateEvent } from '../aggregate/template.events';

/** One document per template: the current body spread out, so list fields can be sorted and filtered. */
export interface TemplateDocument extends ProjectedDocument, TemplateBody {
  id: string;
  organizationId: string;
  version: number;
  /** lower-cased name: the storefront lists templates alphabetically, independent of case */
  sortName: string;
  createdAt: number;
  updatedAt: number;
}

export const templatesProjection: Projection = {
  name: 'templates',
  version: 1,
  collections: {
    templates: [
      // GET /api/v1/templates: newest first
      { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }] },
      // GET /storefront/v1/{orgSlug}: by name
      { fields: [{ field: 'organizationId', direction: 'asc' }, { field: 'sortName', direction: 'asc' }, { field: 'id', direction: 'asc' }] },
    ],
  },
  filter: { streamPrefixes: [TEMPLATE_STREAM] },
  async handle(recorded: RecordedEvent, context) {
    const event = recorded as unknown as TemplateEvent;
    const { organizationId, templateId, template, version, at } = event.data;
    const base = { id: templateId, organizationId, ...template, version, sortName: template.name.toLowerCase() };
    switch (event.type) {
      case 'template.v1.created':
        context.put('templates', { ...base, createdAt: at, updatedAt: at } satisfies TemplateDocument);
        return;
      case 'template.v1.replaced': {
        const existing = await context.get<TemplateDocument>('templates', templateId);
        if (!existing) return;
        // The whole body is replaced; fields a new version leaves out must not survive from the old one.
        context.put('templates', { ...base, createdAt: existing.createdAt, updatedAt: at } satisfies TemplateDocument);
        return;
      }
    }
  },
};

export const TEMPLATES = collectionName(templatesProjection, 'templates');
