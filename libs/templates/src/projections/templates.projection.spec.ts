import { applyEvent } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import { exampleTemplateBody } from '../domain/example.fixture';
import { validateTemplate } from '../domain';
import type { TemplateEvent } from '../aggregate/template.events';
import { TEMPLATES, templatesProjection, type TemplateDocument } from './templates.projection';

const body = validateTemplate(exampleTemplateBody()).template!;

function recorded(event: TemplateEvent, position: number): RecordedEvent {
  return { id: `e${position}`, streamId: `template-${event.data.templateId}`, type: event.type, data: event.data, metadata: {}, revision: position - 1, position, recordedAt: event.data.at };
}

describe('templates projection', () => {
  let store: SqliteReadStore;
  beforeEach(() => (store = new SqliteReadStore({ file: ':memory:' })));
  afterEach(() => store.close());

  const created = recorded({ type: 'template.v1.created', data: { organizationId: 'org_a', templateId: 'tpl_1', template: body, version: 1, at: 1000 } }, 1);
  const replaced = recorded(
    { type: 'template.v1.replaced', data: { organizationId: 'org_a', templateId: 'tpl_1', template: { ...body, name: 'Sliding Door', sections: [] }, version: 2, at: 2000 } },
    2,
  );

  it('given a created template, then the document holds the body, its list fields and a lower-cased sort name', async () => {
    await applyEvent(store, templatesProjection, created);
    const doc = await store.get<TemplateDocument>(TEMPLATES, 'tpl_1');
    expect(doc).toMatchObject({ id: 'tpl_1', organizationId: 'org_a', name: 'Tilt-turn window', sortName: 'tilt-turn window', version: 1, createdAt: 1000, updatedAt: 1000 });
    expect(doc?.pricingRules).toEqual(body.pricingRules);
  });

  it('given a replacement, then the body is replaced whole and createdAt is kept', async () => {
    await applyEvent(store, templatesProjection, created);
    await applyEvent(store, templatesProjection, replaced);
    const doc = await store.get<TemplateDocument>(TEMPLATES, 'tpl_1');
    expect(doc).toMatchObject({ name: 'Sliding Door', sortName: 'sliding door', sections: [], version: 2, createdAt: 1000, updatedAt: 2000 });
  });

  it('given the same events applied twice, then the document is the same as after applying them once', async () => {
    await applyEvent(store, templatesProjection, created);
    await applyEvent(store, templatesProjection, replaced);
    const once = await store.get(TEMPLATES, 'tpl_1');
    expect(await applyEvent(store, templatesProjection, created)).toBe(0);
    expect(await applyEvent(store, templatesProjection, replaced)).toBe(0);
    expect(await store.get(TEMPLATES, 'tpl_1')).toEqual(once);
  });
});
