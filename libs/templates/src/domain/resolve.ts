import { Configuration } from './configuration';
import { TemplateBody } from './template';
import { TemplateIndex, indexTemplate } from './template-index';

export interface ResolvedOption {
  code: string;
  name: string;
}

export interface ResolvedComponentOption extends ResolvedOption {
  /** The option group's name, as this is the human-readable form. */
  optionGroup: string;
}

export interface ResolvedComponentSelection {
  componentName: string;
  componentType: string;
  width: number;
  height: number;
  selectedOptions: ResolvedComponentOption[];
}

/** api-v1 Submission `resolvedConfiguration`: the configuration in words instead of ids. */
export interface ResolvedConfiguration {
  componentSelections: ResolvedComponentSelection[];
  selectedOptions: ResolvedOption[];
  insideColor: { name: string } | null;
  outsideColor: { name: string } | null;
  notes: string;
  selectedSection: string | null;
}

/**
 * Names a configuration's choices from its template. Options are listed in the template's
 * catalog order. An id the template no longer knows (it was replaced after the configuration was
 * made) is shown as the raw id rather than dropped.
 */
export function resolveConfiguration(template: TemplateBody, configuration: Configuration): ResolvedConfiguration {
  const index = indexTemplate(template);
  const colour = (id: string | null) => (id === null ? null : { name: index.materials.get(id)?.name ?? id });
  return {
    componentSelections: configuration.components.map((c) => {
      const component = index.components.get(c.componentId);
      return {
        componentName: component?.name ?? c.componentId,
        componentType: component?.type ?? c.componentId,
        width: c.width,
        height: c.height,
        selectedOptions: inCatalogOrder(template, c.options).map((id) => {
          const option = index.options.get(id);
          const group = option && index.optionGroups.get(option.optionGroup);
          return { ...describeOption(index, id), optionGroup: group?.name ?? option?.optionGroup ?? '' };
        }),
      };
    }),
    selectedOptions: inCatalogOrder(template, configuration.options).map((id) => describeOption(index, id)),
    insideColor: colour(configuration.insideColorId),
    outsideColor: colour(configuration.outsideColorId),
    notes: configuration.notes,
    selectedSection: configuration.section,
  };
}

function describeOption(index: TemplateIndex, id: string): ResolvedOption {
  const option = index.options.get(id);
  return { code: option?.code ?? id, name: option?.name ?? id };
}

function inCatalogOrder(template: TemplateBody, optionIds: readonly string[]): string[] {
  const position = new Map(template.options.map((o, i) => [o.id, i] as const));
  const rank = (id: string) => position.get(id) ?? Number.MAX_SAFE_INTEGER;
  return [...optionIds].sort((a, b) => rank(a) - rank(b));
}
