import { FieldError } from '@lib/shared';
import {
  FieldErrors,
  JsonObject,
  checkUnique,
  field,
  item,
  readAmount,
  readArray,
  readBoolean,
  readChoice,
  readIdentifier,
  readInteger,
  readObject,
  readText,
} from './field-checks';

/** Component type codes (decisions §5): fixed, tilt-turn, turn, tilt, tilt toplight, awning, sliding door, Dutch door, panel. */
export const COMPONENT_TYPES = ['F', 'TT', 'T', 'V', 'K', 'A', 'SD', 'DD', 'panel'] as const;
export type ComponentType = (typeof COMPONENT_TYPES)[number];

/** The seven line-item types of api-v1 adjustment line items. */
export const ITEM_TYPES = ['window', 'door', 'panel', 'separator', 'labor', 'material', 'other'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

export const RULE_LEVELS = ['template', 'component', 'option', 'material'] as const;
export type RuleLevel = (typeof RULE_LEVELS)[number];

export const CALCULATIONS = ['fixed', 'perUnit', 'area', 'tieredArea', 'runningMetre', 'percentage'] as const;
export type Calculation = (typeof CALCULATIONS)[number];

export const OPTION_SCOPES = ['component', 'product'] as const;
export type OptionScope = (typeof OPTION_SCOPES)[number];

export const MATERIAL_SIDES = ['inside', 'outside', 'both'] as const;
export type MaterialSide = (typeof MATERIAL_SIDES)[number];

/** Sizes in integer millimetres. */
export interface SizeConstraints {
  minWidth: number;
  maxWidth: number;
  minHeight: number;
  maxHeight: number;
}

export interface TemplateComponent {
  id: string;
  name: string;
  type: ComponentType;
  constraints: SizeConstraints;
}

export interface OptionGroup {
  id: string;
  name: string;
  /** `component`: chosen per component instance; `product`: chosen once for the whole product. */
  scope: OptionScope;
  required: boolean;
  multiple: boolean;
}

export interface TemplateOption {
  id: string;
  code: string;
  name: string;
  optionGroup: string;
}

export interface TemplateMaterial {
  id: string;
  name: string;
  side: MaterialSide;
}

/** A price band of a tieredArea rule: applies when the area (m²) is at most `upTo`; the last band is open (`null`). */
export interface PriceTier {
  upTo: number | null;
  rate: number;
}

/**
 * One pricing rule. Which value field it carries follows from `calculation`: `amount` (fixed,
 * perUnit), `rate` (area, runningMetre; per m² or per metre), `tiers` (tieredArea), `percent`
 * (percentage, template level only). `target` names the component, option or material the rule
 * prices and is absent at template level. On component and option rules `fixed` charges once per
 * configuration that uses the target, `perUnit` once per use; material rules charge once per side
 * the material is chosen for.
 */
export interface PricingRule {
  level: RuleLevel;
  calculation: Calculation;
  target?: string;
  amount?: number;
  rate?: number;
  tiers?: PriceTier[];
  percent?: number;
  description?: string;
  /** Any type at template level; on other levels and on percentage rules only `labor`. */
  itemType?: ItemType;
}

export interface TemplateBody {
  name: string;
  slug: string;
  description: string;
  productCategory: string;
  materialTags: string[];
  constraints: SizeConstraints;
  components: TemplateComponent[];
  optionGroups: OptionGroup[];
  options: TemplateOption[];
  materials: TemplateMaterial[];
  sections: string[];
  pricingRules: PricingRule[];
}

export const TEMPLATE_LIMITS = {
  name: 200,
  description: 2000,
  label: 200,
  code: 50,
  slug: 100,
  entries: 200,
  materialTags: 50,
  tiers: 50,
  sizeMm: 100_000,
  amount: 1_000_000_000,
  percent: 1000,
} as const;

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Checks an admin-supplied template body field by field. Returns the clean template (HTML stripped
 * from free text, optional lists defaulted to []) only when there are no errors.
 */
export function validateTemplate(body: unknown): { template?: TemplateBody; errors: FieldError[] } {
  const errors = new FieldErrors();
  const root = readObject(errors, body, '', [
    'name', 'slug', 'description', 'productCategory', 'materialTags', 'constraints',
    'components', 'optionGroups', 'options', 'materials', 'sections', 'pricingRules',
  ]);
  if (!root) return { errors: errors.list };

  const list = <T>(key: string, max: number, read: (value: unknown, path: string) => T | undefined) =>
    readList(errors, root[key], key, max, read);

  const name = readText(errors, root.name, 'name', TEMPLATE_LIMITS.name);
  const slug = readSlug(errors, root.slug, 'slug');
  const description =
    root.description == null ? '' : readText(errors, root.description, 'description', TEMPLATE_LIMITS.description, { allowEmpty: true });
  const productCategory = readText(errors, root.productCategory, 'productCategory', TEMPLATE_LIMITS.label);
  const materialTags = list('materialTags', TEMPLATE_LIMITS.materialTags, (v, p) => readText(errors, v, p, TEMPLATE_LIMITS.label));
  checkUnique(errors, materialTags, (i) => item('materialTags', i));
  const constraints = readConstraints(errors, root.constraints, 'constraints');

  const components = list('components', TEMPLATE_LIMITS.entries, (v, p) => readComponent(errors, v, p));
  checkUnique(errors, components.map((c) => c?.id), (i) => field(item('components', i), 'id'));
  components.forEach((component, i) => checkFits(errors, component?.constraints, constraints, field(item('components', i), 'constraints')));

  const optionGroups = list('optionGroups', TEMPLATE_LIMITS.entries, (v, p) => readOptionGroup(errors, v, p));
  checkUnique(errors, optionGroups.map((g) => g?.id), (i) => field(item('optionGroups', i), 'id'));
  const groupIds = idsOf(optionGroups);

  const options = list('options', TEMPLATE_LIMITS.entries, (v, p) => readOption(errors, v, p, groupIds));
  checkUnique(errors, options.map((o) => o?.id), (i) => field(item('options', i), 'id'));
  optionGroups.forEach((group, i) => {
    if (group?.required && group.id !== undefined && !options.some((o) => o?.optionGroup === group.id)) {
      errors.add(field(item('optionGroups', i), 'required'), 'the group has no options, so it could never be filled');
    } else if (group?.required && group.scope === 'component' && components.length === 0) {
      errors.add(field(item('optionGroups', i), 'required'), 'the group is chosen per component and the template has no components, so it could never be filled');
    }
  });

  const materials = list('materials', TEMPLATE_LIMITS.entries, (v, p) => readMaterial(errors, v, p));
  checkUnique(errors, materials.map((m) => m?.id), (i) => field(item('materials', i), 'id'));

  const sections = list('sections', TEMPLATE_LIMITS.entries, (v, p) => readText(errors, v, p, TEMPLATE_LIMITS.label));
  checkUnique(errors, sections, (i) => item('sections', i));

  const targets: Record<Exclude<RuleLevel, 'template'>, Set<string>> = {
    component: idsOf(components),
    option: idsOf(options),
    material: idsOf(materials),
  };
  const pricingRules = list('pricingRules', TEMPLATE_LIMITS.entries, (v, p) => readRule(errors, v, p, targets));

  if (!errors.empty) return { errors: errors.list };
  const template = {
    name, slug, description, productCategory, materialTags, constraints,
    components, optionGroups, options, materials, sections, pricingRules,
  } as TemplateBody;
  return { template, errors: [] };
}

function idsOf(entries: ReadonlyArray<{ id?: string } | undefined>): Set<string> {
  return new Set(entries.flatMap((e) => (e?.id === undefined ? [] : [e.id])));
}

/** An optional list (absent means empty); entries that fail stay as undefined so indexes line up. */
function readList<T>(
  errors: FieldErrors,
  value: unknown,
  path: string,
  max: number,
  read: (value: unknown, path: string) => T | undefined,
): Array<T | undefined> {
  if (value === undefined) return [];
  const entries = readArray(errors, value, path, max) ?? [];
  return entries.map((entry, i) => read(entry, item(path, i)));
}

function readSlug(errors: FieldErrors, value: unknown, path: string): string | undefined {
  if (typeof value !== 'string') {
    errors.add(path, value === undefined ? 'is required' : 'must be a string');
    return undefined;
  }
  if (value.length > TEMPLATE_LIMITS.slug || !SLUG.test(value)) {
    errors.add(path, `must be lowercase letters and digits separated by single hyphens, at most ${TEMPLATE_LIMITS.slug} characters`);
    return undefined;
  }
  return value;
}

function readConstraints(errors: FieldErrors, value: unknown, path: string): SizeConstraints | undefined {
  const raw = readObject(errors, value, path, ['minWidth', 'maxWidth', 'minHeight', 'maxHeight']);
  if (!raw) return undefined;
  const size = (key: keyof SizeConstraints) => readInteger(errors, raw[key], field(path, key), 1, TEMPLATE_LIMITS.sizeMm, 'mm');
  const c = { minWidth: size('minWidth'), maxWidth: size('maxWidth'), minHeight: size('minHeight'), maxHeight: size('maxHeight') };
  if (c.minWidth !== undefined && c.maxWidth !== undefined && c.minWidth > c.maxWidth) {
    errors.add(field(path, 'minWidth'), `must not exceed maxWidth (${c.maxWidth} mm)`);
  }
  if (c.minHeight !== undefined && c.maxHeight !== undefined && c.minHeight > c.maxHeight) {
    errors.add(field(path, 'minHeight'), `must not exceed maxHeight (${c.maxHeight} mm)`);
  }
  return c as SizeConstraints;
}

/**
 * Components sit side by side inside the product (see the configuration's layout rule), so one
 * whose smallest size is larger than the largest product could never be configured: a template
 * error its author should hear of now, not a customer at the configurator.
 */
function checkFits(errors: FieldErrors, component: SizeConstraints | undefined, product: SizeConstraints | undefined, path: string): void {
  if (!component || !product) return;
  for (const [min, max] of [['minWidth', 'maxWidth'], ['minHeight', 'maxHeight']] as const) {
    if (component[min] !== undefined && product[max] !== undefined && component[min] > product[max]) {
      errors.add(field(path, min), `must not exceed the product's ${max} (${product[max]} mm): the component could never fit`);
    }
  }
}

function readComponent(errors: FieldErrors, value: unknown, path: string): Partial<TemplateComponent> | undefined {
  const raw = readObject(errors, value, path, ['id', 'name', 'type', 'constraints']);
  if (!raw) return undefined;
  return {
    id: readIdentifier(errors, raw.id, field(path, 'id')),
    name: readText(errors, raw.name, field(path, 'name'), TEMPLATE_LIMITS.label),
    type: readChoice(errors, raw.type, field(path, 'type'), COMPONENT_TYPES),
    constraints: readConstraints(errors, raw.constraints, field(path, 'constraints')),
  };
}

/** `required` and `multiple` default to false. */
function readOptionGroup(errors: FieldErrors, value: unknown, path: string): Partial<OptionGroup> | undefined {
  const raw = readObject(errors, value, path, ['id', 'name', 'scope', 'required', 'multiple']);
  if (!raw) return undefined;
  return {
    id: readIdentifier(errors, raw.id, field(path, 'id')),
    name: readText(errors, raw.name, field(path, 'name'), TEMPLATE_LIMITS.label),
    scope: readChoice(errors, raw.scope, field(path, 'scope'), OPTION_SCOPES),
    required: raw.required === undefined ? false : readBoolean(errors, raw.required, field(path, 'required')),
    multiple: raw.multiple === undefined ? false : readBoolean(errors, raw.multiple, field(path, 'multiple')),
  };
}

function readOption(errors: FieldErrors, value: unknown, path: string, groupIds: Set<string>): Partial<TemplateOption> | undefined {
  const raw = readObject(errors, value, path, ['id', 'code', 'name', 'optionGroup']);
  if (!raw) return undefined;
  let optionGroup = readIdentifier(errors, raw.optionGroup, field(path, 'optionGroup'));
  if (optionGroup !== undefined && !groupIds.has(optionGroup)) {
    errors.add(field(path, 'optionGroup'), `"${optionGroup}" is not an option group of this template`);
    optionGroup = undefined;
  }
  return {
    id: readIdentifier(errors, raw.id, field(path, 'id')),
    code: readText(errors, raw.code, field(path, 'code'), TEMPLATE_LIMITS.code),
    name: readText(errors, raw.name, field(path, 'name'), TEMPLATE_LIMITS.label),
    optionGroup,
  };
}

function readMaterial(errors: FieldErrors, value: unknown, path: string): Partial<TemplateMaterial> | undefined {
  const raw = readObject(errors, value, path, ['id', 'name', 'side']);
  if (!raw) return undefined;
  return {
    id: readIdentifier(errors, raw.id, field(path, 'id')),
    name: readText(errors, raw.name, field(path, 'name'), TEMPLATE_LIMITS.label),
    side: readChoice(errors, raw.side, field(path, 'side'), MATERIAL_SIDES),
  };
}

type ValueField = 'amount' | 'rate' | 'tiers' | 'percent';

const VALUE_FIELD: Record<Calculation, ValueField> = {
  fixed: 'amount',
  perUnit: 'amount',
  area: 'rate',
  tieredArea: 'tiers',
  runningMetre: 'rate',
  percentage: 'percent',
};

const TARGET_NOUN: Record<Exclude<RuleLevel, 'template'>, string> = {
  component: 'a component',
  option: 'an option',
  material: 'a material',
};

function readRule(
  errors: FieldErrors,
  value: unknown,
  path: string,
  targets: Record<Exclude<RuleLevel, 'template'>, Set<string>>,
): Partial<PricingRule> | undefined {
  const raw = readObject(errors, value, path, [
    'level', 'calculation', 'target', 'amount', 'rate', 'tiers', 'percent', 'description', 'itemType',
  ]);
  if (!raw) return undefined;
  const at = (key: string) => field(path, key);
  const level = readChoice(errors, raw.level, at('level'), RULE_LEVELS);
  const calculation = readChoice(errors, raw.calculation, at('calculation'), CALCULATIONS);
  const rule: Partial<PricingRule> = { level, calculation };

  if (calculation !== undefined) {
    const needed = VALUE_FIELD[calculation];
    for (const other of ['amount', 'rate', 'tiers', 'percent'] as const) {
      if (other !== needed && raw[other] !== undefined) errors.add(at(other), `does not apply to ${calculation} rules`);
    }
    if (needed === 'tiers') rule.tiers = readTiers(errors, raw.tiers, at('tiers'));
    else if (needed === 'percent') rule.percent = readAmount(errors, raw.percent, at('percent'), TEMPLATE_LIMITS.percent);
    else rule[needed] = readAmount(errors, raw[needed], at(needed), TEMPLATE_LIMITS.amount);
  }
  if (calculation === 'percentage' && level !== undefined && level !== 'template') {
    errors.add(at('calculation'), 'percentage rules apply at template level only');
  }
  if (calculation === 'perUnit' && level === 'template') {
    errors.add(at('calculation'), 'perUnit charges per component, option or material use; use fixed at template level');
  }

  if (level === 'template') {
    if (raw.target !== undefined) errors.add(at('target'), 'does not apply to template rules');
  } else if (level !== undefined) {
    const target = readIdentifier(errors, raw.target, at('target'));
    if (target !== undefined && !targets[level].has(target)) {
      errors.add(at('target'), `"${target}" is not ${TARGET_NOUN[level]} of this template`);
    } else {
      rule.target = target;
    }
  }

  if (raw.description != null) {
    rule.description = readText(errors, raw.description, at('description'), TEMPLATE_LIMITS.description);
  }
  if (raw.itemType !== undefined) {
    rule.itemType = readChoice(errors, raw.itemType, at('itemType'), ITEM_TYPES);
    const typed = level !== 'template' || calculation === 'percentage';
    if (rule.itemType !== undefined && rule.itemType !== 'labor' && typed) {
      errors.add(at('itemType'), 'only "labor" can be set here: the line type follows from what the rule prices');
    }
  }
  return rule;
}

/** Bands in ascending order of `upTo` (m²), the last one open-ended so every area has a rate. */
function readTiers(errors: FieldErrors, value: unknown, path: string): PriceTier[] | undefined {
  const entries = readArray(errors, value, path, TEMPLATE_LIMITS.tiers);
  if (!entries) return undefined;
  if (entries.length === 0) {
    errors.add(path, 'must hold at least one tier');
    return undefined;
  }
  let previous: number | undefined;
  return entries.map((entry, i) => {
    const p = item(path, i);
    const raw: JsonObject | undefined = readObject(errors, entry, p, ['upTo', 'rate']);
    if (!raw) return undefined;
    const rate = readAmount(errors, raw.rate, field(p, 'rate'), TEMPLATE_LIMITS.amount);
    const upTo = raw.upTo;
    const last = i === entries.length - 1;
    if (upTo === null) {
      if (!last) errors.add(field(p, 'upTo'), 'only the last tier may be open-ended (null)');
    } else if (typeof upTo !== 'number' || !Number.isFinite(upTo) || upTo <= 0) {
      errors.add(field(p, 'upTo'), upTo === undefined ? 'is required' : 'must be a positive number of square metres, or null');
    } else {
      if (last) errors.add(field(p, 'upTo'), 'must be null: the last tier covers every larger area');
      else if (previous !== undefined && upTo <= previous) {
        errors.add(field(p, 'upTo'), `must be greater than the previous tier's upTo (${previous})`);
      }
      previous = upTo;
    }
    return { upTo, rate } as PriceTier;
  }) as PriceTier[];
}
