import Decimal from 'decimal.js';
import { checkedAmount, isRepresentableAmount, lineTotal, moneyDecimal, roundMoney, ValidationFailed } from '@lib/shared';
import { Configuration } from './configuration';
import { ComponentType, ItemType, PriceTier, PricingRule, TemplateBody } from './template';
import { TemplateIndex, indexTemplate } from './template-index';

/** A line of the service's own price breakdown; it can be sent back unchanged as an adjustment line item. */
export interface BaseLineItem {
  description: string;
  /** Always the configuration's unitAmount. */
  quantity: number;
  /** Per unit, rounded half-up to the currency's minor unit. */
  unitPrice: number;
  /** quantity × unitPrice, rounded to the minor unit. */
  total: number;
  itemType: ItemType;
  itemKey: string;
  sortOffset: number;
}

export interface BasePricing {
  lineItems: BaseLineItem[];
  /** Sum of the line totals. */
  subtotal: number;
}

/**
 * The most lines a base price may have: api-v1's limit on line items (an adjustment, a quote's
 * lines), so that a base breakdown can always be sent back unchanged as the spec promises.
 */
export const MAX_BASE_LINE_ITEMS = 200;

/**
 * A configuration whose base price would have more than MAX_BASE_LINE_ITEMS lines (rules applied
 * per part multiply with the parts): refused (422 `validation_error`) at `components`, before
 * anything is stored.
 */
export class TooManyBaseLines extends ValidationFailed {
  constructor(readonly count: number) {
    const message = `this configuration would be priced in ${count} lines, more than the ${MAX_BASE_LINE_ITEMS} a price may have; use fewer parts or options`;
    super([{ path: 'components', message }], `The configuration would be priced in ${count} lines, more than ${MAX_BASE_LINE_ITEMS}. Nothing was changed.`);
  }
}

/** One place a rule applies to: the rectangle it measures and how its line is keyed and labelled. */
interface RuleUse {
  widthMm: number;
  heightMm: number;
  itemKey: string;
  itemType: ItemType;
  label: string;
}

/**
 * The base price breakdown of a valid configuration of a valid template: one line per rule that
 * applies, in rule order and, within a rule, in component order. All arithmetic is decimal; each
 * per-unit amount is rounded once, to the minor unit of `currency`. A price beyond the largest
 * amount of the currency is refused (AmountTooLarge) at `unitAmount` when one unit's price fits
 * (fewer units would do), else at the configuration as a whole (path `""`). More than
 * MAX_BASE_LINE_ITEMS lines are refused too (TooManyBaseLines).
 */
export function priceConfiguration(
  template: TemplateBody,
  templateId: string,
  configuration: Configuration,
  currency: string,
  locale: string = 'en',
): BasePricing {
  const index = indexTemplate(template);
  const labels = LINE_LABELS[locale as LabelLocale] ?? LINE_LABELS.en;
  const quantity = configuration.unitAmount;
  const lines: Array<Omit<BaseLineItem, 'unitPrice' | 'total'> & { unitPrice: Decimal; total: Decimal }> = [];
  let unitPricesSoFar = moneyDecimal(0);
  let subtotal = moneyDecimal(0);

  template.pricingRules.forEach((rule, ruleIndex) => {
    for (const use of usesOf(rule, ruleIndex, templateId, configuration, index, labels)) {
      // Every base line has the same quantity, so a percentage of the per-unit prices before it is
      // the same share of their totals, and keeps quantity × unitPrice = total on this line too.
      const amount =
        rule.calculation === 'percentage'
          ? unitPricesSoFar.times(ruleValue(rule, 'percent')).dividedBy(100)
          : charge(rule, use);
      const unitPrice = roundMoney(amount, currency);
      const total = lineTotal(quantity, unitPrice, currency);
      unitPricesSoFar = unitPricesSoFar.plus(unitPrice);
      subtotal = subtotal.plus(total);
      lines.push({
        description: rule.description ?? use.label,
        quantity,
        unitPrice,
        total,
        itemType: rule.calculation === 'percentage' || rule.itemType === 'labor' ? 'labor' : use.itemType,
        itemKey: use.itemKey,
        sortOffset: lines.length * 10,
      });
    }
  });
  if (lines.length > MAX_BASE_LINE_ITEMS) throw new TooManyBaseLines(lines.length);
  // No amount is negative: when one unit's prices together fit, so does each, and only the number of units is too many.
  const path = isRepresentableAmount(unitPricesSoFar, currency) ? 'unitAmount' : '';
  const amount = (value: Decimal) => checkedAmount(value, currency, path);
  return {
    lineItems: lines.map((line) => ({ ...line, unitPrice: amount(line.unitPrice), total: amount(line.total) })),
    subtotal: amount(subtotal),
  };
}

type LabelLocale = 'en' | 'de' | 'nl';

interface LineLabels {
  basePrice: string;
  surcharge: (percent: number) => string;
  inside: string;
  outside: string;
}

/**
 * The percent as the template states it: up to 10 decimals, so a rule of 12.34567 % reads so (it
 * read 12.3457 % until 2026-11-27, found by a review) while float noise (0.1 + 0.2) does not show.
 */
const PERCENT: Record<LabelLocale, Intl.NumberFormat> = {
  en: new Intl.NumberFormat('en', { maximumFractionDigits: 10 }),
  de: new Intl.NumberFormat('de', { maximumFractionDigits: 10 }),
  nl: new Intl.NumberFormat('nl', { maximumFractionDigits: 10 }),
};
const percentIn = (locale: LabelLocale, percent: number) => PERCENT[locale].format(percent);

/**
 * Descriptions of base lines whose rule names none, in the session's language (the customer reads
 * them in the configurator and on the quote); other locales get English. A rule's own
 * `description`, and component, option and material names, are the template's words, as written.
 */
const LINE_LABELS: Record<LabelLocale, LineLabels> = {
  en: { basePrice: 'Base price', surcharge: (p) => `${percentIn('en', p)}% surcharge`, inside: 'inside', outside: 'outside' },
  de: { basePrice: 'Grundpreis', surcharge: (p) => `${percentIn('de', p)} % Aufschlag`, inside: 'innen', outside: 'außen' },
  nl: { basePrice: 'Basisprijs', surcharge: (p) => `${percentIn('nl', p)}% toeslag`, inside: 'binnen', outside: 'buiten' },
};

function componentItemType(type: ComponentType): ItemType {
  switch (type) {
    case 'SD':
    case 'DD':
      return 'door';
    case 'panel':
      return 'panel';
    default:
      return 'window'; // sashes and fixed glazing: F, TT, T, V, K, A
  }
}

/**
 * Where a rule applies. Component rules: every instance of the target component. Option rules:
 * every component carrying the option, or the product for a product-level option. Material rules:
 * each side (inside, outside) the material is chosen for. `fixed` on a component or option rule
 * charges once, on its first use.
 */
function usesOf(
  rule: PricingRule,
  ruleIndex: number,
  templateId: string,
  configuration: Configuration,
  index: TemplateIndex,
  labels: LineLabels,
): RuleUse[] {
  const product = { widthMm: configuration.width, heightMm: configuration.height };
  switch (rule.level) {
    case 'template':
      return [{
        ...product,
        itemKey: `product:${templateId}:${ruleIndex}`,
        itemType: rule.itemType ?? 'other',
        label: rule.calculation === 'percentage' ? labels.surcharge(ruleValue(rule, 'percent')) : labels.basePrice,
      }];
    case 'component': {
      const component = index.components.get(ruleValue(rule, 'target'));
      if (!component) return [];
      const uses = configuration.components
        .filter((c) => c.componentId === component.id)
        .map((c) => ({
          widthMm: c.width,
          heightMm: c.height,
          itemKey: `component:${c.id}:${component.id}`,
          itemType: componentItemType(component.type),
          label: component.name,
        }));
      return rule.calculation === 'fixed' ? uses.slice(0, 1) : uses;
    }
    case 'option': {
      const option = index.options.get(ruleValue(rule, 'target'));
      if (!option) return [];
      const onComponents = configuration.components
        .filter((c) => c.options.includes(option.id))
        .map((c) => ({ widthMm: c.width, heightMm: c.height, owner: c.id }));
      const onProduct = configuration.options.includes(option.id) ? [{ ...product, owner: 'product' }] : [];
      const uses = [...onComponents, ...onProduct].map(({ owner, ...size }) => ({
        ...size,
        itemKey: `option:${owner}:${option.id}`,
        itemType: 'material' as const,
        label: option.name,
      }));
      return rule.calculation === 'fixed' ? uses.slice(0, 1) : uses;
    }
    case 'material': {
      const material = index.materials.get(ruleValue(rule, 'target'));
      if (!material) return [];
      const chosen = { inside: configuration.insideColorId, outside: configuration.outsideColorId };
      const sides = (['inside', 'outside'] as const).filter((side) => chosen[side] === material.id);
      const uses = sides.map((side) => ({
        ...product,
        itemKey: `material:${side}:${material.id}`,
        itemType: 'material' as const,
        label: `${material.name} (${labels[side]})`,
      }));
      // `fixed` is once per configuration (decisions §5), whichever sides show the material:
      // under the key of its first side, named without a side when it covers both.
      if (rule.calculation !== 'fixed' || uses.length < 2) return uses;
      return [{ ...uses[0], label: material.name }];
    }
  }
}

/** The unrounded per-unit amount of a non-percentage rule for one use. */
function charge(rule: PricingRule, use: RuleUse): Decimal {
  switch (rule.calculation) {
    case 'fixed':
    case 'perUnit':
      return moneyDecimal(ruleValue(rule, 'amount'));
    case 'area':
      return moneyDecimal(ruleValue(rule, 'rate')).times(areaM2(use));
    case 'tieredArea': {
      const area = areaM2(use);
      return moneyDecimal(tierFor(ruleValue(rule, 'tiers'), area).rate).times(area);
    }
    case 'runningMetre':
      return moneyDecimal(ruleValue(rule, 'rate')).times(perimeterM(use));
    case 'percentage':
      throw new Error('percentage rules are priced from the lines before them');
  }
}

function areaM2(use: RuleUse): Decimal {
  return moneyDecimal(use.widthMm).times(use.heightMm).dividedBy(1_000_000);
}

function perimeterM(use: RuleUse): Decimal {
  return moneyDecimal(use.widthMm).plus(use.heightMm).times(2).dividedBy(1000);
}

/** The first band whose `upTo` the area does not exceed; the open last band catches the rest. */
function tierFor(tiers: readonly PriceTier[], area: Decimal): PriceTier {
  return tiers.find((t) => t.upTo === null || area.lte(t.upTo)) ?? tiers[tiers.length - 1];
}

/** A field the template validator guarantees for this calculation; missing means an unvalidated template. */
function ruleValue<K extends 'amount' | 'rate' | 'tiers' | 'percent' | 'target'>(rule: PricingRule, key: K): NonNullable<PricingRule[K]> {
  const value = rule[key];
  if (value === undefined || value === null) {
    throw new Error(`Pricing rule (${rule.level}/${rule.calculation}) has no ${key}; validate the template first`);
  }
  return value as NonNullable<PricingRule[K]>;
}
