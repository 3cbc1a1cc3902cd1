import { fold } from '@lib/event-sourcing';
import { NotFound } from '@lib/shared';
import { exampleTemplateBody } from '../domain/example.fixture';
import { validateTemplate, type TemplateBody } from '../domain';
import { templateDecider, type TemplateCommand } from './template.decider';
import { TemplateAlreadyExists } from './template.errors';
import type { TemplateEvent } from './template.events';

const ORG = 'org_a';
const TEMPLATE_ID = 'tpl_1';
const body: TemplateBody = validateTemplate(exampleTemplateBody()).template!;

const created: TemplateEvent = { type: 'template.v1.created', data: { organizationId: ORG, templateId: TEMPLATE_ID, template: body, version: 1, at: 1000 } };

function when(given: TemplateEvent[], command: TemplateCommand): TemplateEvent[] {
  return templateDecider.decide(command, fold(templateDecider, given));
}

describe('template decider', () => {
  describe('given no template', () => {
    it('when it is created, then template.v1.created carries the whole body as version 1', () => {
      expect(when([], { type: 'createTemplate', templateId: TEMPLATE_ID, organizationId: ORG, template: body, at: 1000 })).toEqual([created]);
    });

    it('when it is replaced, then it is not found', () => {
      expect(() => when([], { type: 'replaceTemplate', organizationId: ORG, template: body, at: 2000 })).toThrow(NotFound);
    });
  });

  describe('given a created template', () => {
    it('when it is created again, then nothing more happens for its organization (a retry), and another organization is refused the id', () => {
      // The same organization again: the retry of the keyed request that made it.
      expect(when([created], { type: 'createTemplate', templateId: TEMPLATE_ID, organizationId: ORG, template: body, at: 2000 })).toEqual([]);
      expect(() => when([created], { type: 'createTemplate', templateId: TEMPLATE_ID, organizationId: 'org_other', template: body, at: 2000 })).toThrow(TemplateAlreadyExists);
    });

    it('when it is replaced with another body, then template.v1.replaced carries it as version 2', () => {
      const renamed = { ...body, name: 'Tilt-turn window XL' };
      expect(when([created], { type: 'replaceTemplate', organizationId: ORG, template: renamed, at: 2000 })).toEqual([
        { type: 'template.v1.replaced', data: { organizationId: ORG, templateId: TEMPLATE_ID, template: renamed, version: 2, at: 2000 } },
      ]);
    });

    it('when it is replaced with the same body (keys in another order), then nothing happens', () => {
      const reordered = Object.fromEntries(Object.entries(body).reverse()) as unknown as TemplateBody;
      expect(when([created], { type: 'replaceTemplate', organizationId: ORG, template: reordered, at: 2000 })).toEqual([]);
    });

    it('when another organization replaces it, then it is not found', () => {
      expect(() => when([created], { type: 'replaceTemplate', organizationId: 'org_b', template: body, at: 2000 })).toThrow(NotFound);
    });
  });

  describe('given a template replaced once', () => {
    it('when it is replaced again, then the version counts on', () => {
      const v2 = { ...body, name: 'v2' };
      const replaced: TemplateEvent = { type: 'template.v1.replaced', data: { organizationId: ORG, templateId: TEMPLATE_ID, template: v2, version: 2, at: 2000 } };
      const [event] = when([created, replaced], { type: 'replaceTemplate', organizationId: ORG, template: { ...body, name: 'v3' }, at: 3000 });
      expect(event).toMatchObject({ type: 'template.v1.replaced', data: { version: 3 } });
    });
  });
});
