import type { Decider } from '@lib/event-sourcing';
import { canonicalJson, NotFound } from '@lib/shared';
import { type TemplateBody } from '../domain';
import { TemplateAlreadyExists } from './template.errors';
import type { TemplateEvent } from './template.events';

export interface TemplateState {
  exists: boolean;
  templateId: string | null;
  organizationId: string | null;
  template: TemplateBody | null;
  version: number;
  createdAt: number | null;
}

/** Bodies arrive validated (validateTemplate) at the edge; the decider only guards the lifecycle. */
export type TemplateCommand =
  | { type: 'createTemplate'; templateId: string; organizationId: string; template: TemplateBody; at: number }
  | { type: 'replaceTemplate'; organizationId: string; template: TemplateBody; at: number };

const initialState = (): TemplateState => ({ exists: false, templateId: null, organizationId: null, template: null, version: 0, createdAt: null });

function decide(command: TemplateCommand, state: TemplateState): TemplateEvent[] {
  switch (command.type) {
    case 'createTemplate': {
      if (state.exists) {
        // The same template again: a retry of the keyed request that made it (its id is the request's).
        if (state.organizationId === command.organizationId) return [];
        throw new TemplateAlreadyExists(command.templateId);
      }
      return [
        {
          type: 'template.v1.created',
          data: { organizationId: command.organizationId, templateId: command.templateId, template: command.template, version: 1, at: command.at },
        },
      ];
    }
    case 'replaceTemplate': {
      // Another organization's template does not exist for this caller.
      if (!state.exists || state.organizationId !== command.organizationId) throw new NotFound('Template');
      // PUT is idempotent: the same body again is not a new version.
      if (canonicalJson(command.template) === canonicalJson(state.template)) return [];
      return [
        {
          type: 'template.v1.replaced',
          data: { organizationId: state.organizationId, templateId: state.templateId!, template: command.template, version: state.version + 1, at: command.at },
        },
      ];
    }
  }
}

function evolve(state: TemplateState, event: TemplateEvent): TemplateState {
  switch (event.type) {
    case 'template.v1.created':
      return {
        exists: true,
        templateId: event.data.templateId,
        organizationId: event.data.organizationId,
        template: event.data.template,
        version: event.data.version,
        createdAt: event.data.at,
      };
    case 'template.v1.replaced':
      return { ...state, template: event.data.template, version: event.data.version };
  }
}

export const templateDecider: Decider<TemplateState, TemplateCommand, TemplateEvent> = { initialState, decide, evolve };
