import { OptionGroup, TemplateBody, TemplateComponent, TemplateMaterial, TemplateOption } from './template';

/** Lookups by id over a validated template, built once per validation or pricing run. */
export interface TemplateIndex {
  components: ReadonlyMap<string, TemplateComponent>;
  optionGroups: ReadonlyMap<string, OptionGroup>;
  options: ReadonlyMap<string, TemplateOption>;
  materials: ReadonlyMap<string, TemplateMaterial>;
}

export function indexTemplate(template: TemplateBody): TemplateIndex {
  const byId = <T extends { id: string }>(entries: readonly T[]) => new Map(entries.map((e) => [e.id, e] as const));
  return {
    components: byId(template.components),
    optionGroups: byId(template.optionGroups),
    options: byId(template.options),
    materials: byId(template.materials),
  };
}
