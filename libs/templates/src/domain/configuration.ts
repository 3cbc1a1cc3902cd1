import { FieldError } from '@lib/shared';
import {
  FieldErrors,
  byCodeUnits,
  checkUnique,
  field,
  item,
  readArray,
  readIdentifier,
  readInteger,
  readObject,
  readText,
} from './field-checks';
import { OptionScope, SizeConstraints, TemplateBody } from './template';
import { TemplateIndex, indexTemplate } from './template-index';

/** One placed component: an instance of a template component with its own size and options. */
export interface ConfiguredComponent {
  /** Instance id chosen by the client, unique within the configuration (`c1`, `c2`, …). */
  id: string;
  componentId: string;
  width: number;
  height: number;
  /** Option ids, de-duplicated and sorted. */
  options: string[];
}

/** The canonical configuration: raw ids, integer millimetres, every default filled in. */
export interface Configuration {
  width: number;
  height: number;
  /** Number of identical units ordered. */
  unitAmount: number;
  /** In layout order, left to right. */
  components: ConfiguredComponent[];
  /** Product-level option ids, de-duplicated and sorted. */
  options: string[];
  insideColorId: string | null;
  outsideColorId: string | null;
  notes: string;
  section: string | null;
}

export const CONFIGURATION_LIMITS = {
  components: 50,
  unitAmount: 999,
  notes: 2000,
  optionsPerList: 200,
} as const;

/** Instance id that would collide with the product-level form of option item keys (`option:product:<id>`). */
const RESERVED_INSTANCE_ID = 'product';

/**
 * Checks a customer's configuration against its template and returns the canonical form: defaults
 * filled (unitAmount 1, no options, empty notes, no colours, no section) and option lists
 * de-duplicated and sorted, so that equal configurations serialise, and hash, identically.
 */
export function validateConfiguration(
  template: TemplateBody,
  input: unknown,
): { configuration?: Configuration; errors: FieldError[] } {
  const errors = new FieldErrors();
  const raw = readObject(errors, input, '', [
    'width', 'height', 'unitAmount', 'components', 'options', 'insideColorId', 'outsideColorId', 'notes', 'section',
  ]);
  if (!raw) return { errors: errors.list };
  const index = indexTemplate(template);
  const { constraints } = template;

  const width = readInteger(errors, raw.width, 'width', constraints.minWidth, constraints.maxWidth, 'mm');
  const height = readInteger(errors, raw.height, 'height', constraints.minHeight, constraints.maxHeight, 'mm');
  const unitAmount =
    raw.unitAmount === undefined ? 1 : readInteger(errors, raw.unitAmount, 'unitAmount', 1, CONFIGURATION_LIMITS.unitAmount);
  const components = readComponents(errors, raw.components, index, { width, height });
  const options = readOptions(errors, raw.options === undefined ? [] : raw.options, 'options', 'product', index);
  const insideColorId = readColour(errors, raw.insideColorId, 'insideColorId', 'inside', index);
  const outsideColorId = readColour(errors, raw.outsideColorId, 'outsideColorId', 'outside', index);
  const notes = raw.notes == null ? '' : readText(errors, raw.notes, 'notes', CONFIGURATION_LIMITS.notes, { allowEmpty: true });
  const section = readSection(errors, raw.section, template.sections);

  if (!errors.empty) return { errors: errors.list };
  const configuration = {
    width, height, unitAmount, components, options, insideColorId, outsideColorId, notes, section,
  } as Configuration;
  return { configuration, errors: [] };
}

/**
 * Layout rule: components sit side by side, left to right, inside the product frame. So their
 * widths together may not exceed the product width, and each component is at most as tall as the
 * product. Frame and mullion allowances are left to the template's component constraints.
 */
function readComponents(
  errors: FieldErrors,
  value: unknown,
  index: TemplateIndex,
  product: { width?: number; height?: number },
): ConfiguredComponent[] | undefined {
  const entries = readArray(errors, value ?? [], 'components', CONFIGURATION_LIMITS.components);
  if (!entries) return undefined;
  // A product built from components is nothing without one: the frame alone is no window.
  if (entries.length === 0 && index.components.size > 0) {
    errors.add('components', 'needs at least one component: this template is built from components');
    return undefined;
  }
  const components = entries.map((entry, i) => readComponent(errors, entry, item('components', i), index, product.height));
  checkUnique(errors, components.map((c) => c?.id), (i) => field(item('components', i), 'id'));

  const widths = components.map((c) => c?.width);
  if (product.width !== undefined && widths.every((w) => w !== undefined)) {
    const together = (widths as number[]).reduce((sum, w) => sum + w, 0);
    if (together > product.width) {
      errors.add('components', `the components are ${together} mm wide together, wider than the product (${product.width} mm)`);
    }
  }
  return components as ConfiguredComponent[];
}

function readComponent(
  errors: FieldErrors,
  value: unknown,
  path: string,
  index: TemplateIndex,
  productHeight: number | undefined,
): Partial<ConfiguredComponent> | undefined {
  const raw = readObject(errors, value, path, ['id', 'componentId', 'width', 'height', 'options']);
  if (!raw) return undefined;
  const at = (key: string) => field(path, key);

  let id = readIdentifier(errors, raw.id, at('id'));
  if (id === RESERVED_INSTANCE_ID) {
    errors.add(at('id'), `"${RESERVED_INSTANCE_ID}" is reserved; choose another instance id`);
    id = undefined;
  }

  let componentId: string | undefined;
  let limits: SizeConstraints | undefined;
  if (typeof raw.componentId !== 'string') {
    errors.add(at('componentId'), raw.componentId === undefined ? 'is required' : 'must be a component id');
  } else if (!index.components.has(raw.componentId)) {
    errors.add(at('componentId'), `"${raw.componentId}" is not a component of this template`);
  } else {
    componentId = raw.componentId;
    limits = index.components.get(componentId)!.constraints;
  }

  // Without a known component only the shape of the size can be checked.
  const width = readInteger(errors, raw.width, at('width'), limits?.minWidth ?? 1, limits?.maxWidth ?? Number.MAX_SAFE_INTEGER, 'mm');
  let height = readInteger(errors, raw.height, at('height'), limits?.minHeight ?? 1, limits?.maxHeight ?? Number.MAX_SAFE_INTEGER, 'mm');
  if (height !== undefined && productHeight !== undefined && height > productHeight) {
    errors.add(at('height'), `must not exceed the product height (${productHeight} mm)`);
    height = undefined;
  }

  const options = readOptions(errors, raw.options === undefined ? [] : raw.options, at('options'), 'component', index);
  return { id, componentId, width, height, options };
}

/**
 * An option list at one scope: known ids, groups of that scope only, one option per non-multiple
 * group, every required group of that scope filled. Repeats collapse; the result is sorted.
 */
function readOptions(errors: FieldErrors, value: unknown, path: string, scope: OptionScope, index: TemplateIndex): string[] | undefined {
  const entries = readArray(errors, value, path, CONFIGURATION_LIMITS.optionsPerList);
  if (!entries) return undefined;
  const chosen = new Set<string>();
  const chosenByGroup = new Map<string, string>();
  for (const [j, entry] of entries.entries()) {
    const p = item(path, j);
    if (typeof entry !== 'string') {
      errors.add(p, 'must be an option id');
      continue;
    }
    const option = index.options.get(entry);
    if (!option) {
      errors.add(p, `"${entry}" is not an option of this template`);
      continue;
    }
    if (chosen.has(entry)) continue;
    const group = index.optionGroups.get(option.optionGroup)!;
    if (group.scope !== scope) {
      errors.add(
        p,
        group.scope === 'product'
          ? `"${option.name}" applies to the whole product; choose it in the product's options`
          : `"${option.name}" applies to a component; choose it in that component's options`,
      );
      continue;
    }
    const earlier = chosenByGroup.get(group.id);
    if (earlier !== undefined && !group.multiple) {
      errors.add(p, `"${group.name}" allows only one option and "${earlier}" is already chosen`);
      continue;
    }
    chosenByGroup.set(group.id, entry);
    chosen.add(entry);
  }
  for (const group of index.optionGroups.values()) {
    if (group.scope === scope && group.required && !chosenByGroup.has(group.id)) {
      errors.add(path, `needs an option from "${group.name}"`);
    }
  }
  return [...chosen].sort(byCodeUnits);
}

function readColour(
  errors: FieldErrors,
  value: unknown,
  path: string,
  side: 'inside' | 'outside',
  index: TemplateIndex,
): string | null | undefined {
  if (value == null) return null;
  if (typeof value !== 'string') {
    errors.add(path, 'must be a material id or null');
    return undefined;
  }
  const material = index.materials.get(value);
  if (!material) {
    errors.add(path, `"${value}" is not a material of this template`);
    return undefined;
  }
  if (material.side !== 'both' && material.side !== side) {
    errors.add(path, `"${material.name}" is only available on the ${material.side}`);
    return undefined;
  }
  return value;
}

function readSection(errors: FieldErrors, value: unknown, sections: readonly string[]): string | null | undefined {
  if (value == null) return null;
  if (typeof value !== 'string') {
    errors.add('section', 'must be a string or null');
    return undefined;
  }
  if (!sections.includes(value)) {
    errors.add('section', `"${value}" is not a section of this template`);
    return undefined;
  }
  return value;
}
