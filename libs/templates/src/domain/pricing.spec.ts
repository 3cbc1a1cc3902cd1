import { AmountTooLarge } from '@lib/shared';
import { Configuration, validateConfiguration } from './configuration';
import { exampleConfigurationInput, exampleTemplateBody } from './example.fixture';
import { BasePricing, MAX_BASE_LINE_ITEMS, priceConfiguration, TooManyBaseLines } from './pricing';
import { TemplateBody, validateTemplate } from './template';

const TEMPLATE_ID = 'tpl_1';

/** A catalog with one component of each line type, glazing per component, extras for the product. */
function catalog(pricingRules: unknown[], maxMm = 3000): TemplateBody {
  const size = { minWidth: 100, maxWidth: maxMm, minHeight: 100, maxHeight: maxMm };
  const { template, errors } = validateTemplate({
    name: 'Test',
    slug: 'test',
    productCategory: 'window',
    constraints: size,
    components: [
      { id: 'TT', name: 'Tilt-turn sash', type: 'TT', constraints: size },
      { id: 'SD', name: 'Sliding door', type: 'SD', constraints: size },
      { id: 'P', name: 'Infill panel', type: 'panel', constraints: size },
    ],
    optionGroups: [
      { id: 'glazing', name: 'Glazing', scope: 'component', multiple: false },
      { id: 'extras', name: 'Extras', scope: 'product', multiple: true },
    ],
    options: [
      { id: 'hr3', code: 'HR+++', name: 'Triple glazing', optionGroup: 'glazing' },
      { id: 'screen', code: 'SCR', name: 'Insect screen', optionGroup: 'extras' },
    ],
    materials: [
      { id: 'white', name: 'White', side: 'both' },
      { id: 'ral7016', name: 'Anthracite', side: 'outside' },
    ],
    pricingRules,
  });
  if (!template) throw new Error(`test template is invalid: ${JSON.stringify(errors)}`);
  return template;
}

function configure(template: TemplateBody, input: Record<string, unknown>): Configuration {
  const { configuration, errors } = validateConfiguration(template, input);
  if (!configuration) throw new Error(`test configuration is invalid: ${JSON.stringify(errors)}`);
  return configuration;
}

/** 1200 × 1400 mm (1.68 m², 5.2 m around) with two 600 × 1400 mm sashes (0.84 m², 4.0 m around each). */
const twoSashes = {
  width: 1200,
  height: 1400,
  components: [
    { id: 'c1', componentId: 'TT', width: 600, height: 1400 },
    { id: 'c2', componentId: 'TT', width: 600, height: 1400 },
  ],
};

function price(rules: unknown[], input: Record<string, unknown> = twoSashes, currency = 'EUR'): BasePricing {
  const template = catalog(rules);
  return priceConfiguration(template, TEMPLATE_ID, configure(template, input), currency);
}

const lines = (pricing: BasePricing) => pricing.lineItems.map((l) => [l.itemKey, l.unitPrice]);

describe('priceConfiguration', () => {
  describe('given a fixed rule', () => {
    it('then the template charges it once, as the base price', () => {
      const pricing = price([{ level: 'template', calculation: 'fixed', amount: 50 }]);
      expect(pricing).toEqual({
        lineItems: [{
          description: 'Base price', quantity: 1, unitPrice: 50, total: 50,
          itemType: 'other', itemKey: 'product:tpl_1:0', sortOffset: 0,
        }],
        subtotal: 50,
      });
    });

    it('then a template rule keeps the item type it names', () => {
      const pricing = price([{ level: 'template', calculation: 'fixed', amount: 15, itemType: 'separator', description: 'Mullion' }]);
      expect(pricing.lineItems[0]).toMatchObject({ description: 'Mullion', itemType: 'separator' });
    });

    it('then a component rule charges once however many instances there are', () => {
      const pricing = price([{ level: 'component', target: 'TT', calculation: 'fixed', amount: 20 }]);
      expect(lines(pricing)).toEqual([['component:c1:TT', 20]]);
    });
  });

  describe('given rules applied per part, more parts than lines a price may have', () => {
    // 40 parts of 100 mm side by side; each rule is one line per part.
    const parts = (count: number) => ({
      width: 100 * count,
      height: 1000,
      components: Array.from({ length: count }, (_, i) => ({ id: `c${i + 1}`, componentId: 'TT', width: 100, height: 1000 })),
    });
    const perPart = (count: number) => Array.from({ length: count }, () => ({ level: 'component', target: 'TT', calculation: 'perUnit', amount: 1 }));

    it(`then up to ${MAX_BASE_LINE_ITEMS} lines are priced`, () => {
      const template = catalog(perPart(5), 5000);
      expect(priceConfiguration(template, TEMPLATE_ID, configure(template, parts(40)), 'EUR').lineItems).toHaveLength(MAX_BASE_LINE_ITEMS);
    });

    it('then one line more is refused at components, with the count', () => {
      const template = catalog(perPart(5), 5000);
      const refuse = () => priceConfiguration(template, TEMPLATE_ID, configure(template, parts(41)), 'EUR');
      expect(refuse).toThrow(TooManyBaseLines);
      try {
        refuse();
      } catch (error) {
        expect((error as TooManyBaseLines).details).toEqual({ fields: [{ path: 'components', message: expect.stringContaining('205 lines') }] });
        expect((error as TooManyBaseLines).under('configuration').details).toEqual({ fields: [{ path: 'configuration.components', message: expect.stringContaining('205 lines') }] });
      }
    });
  });

  describe('given a perUnit rule', () => {
    it('then a component rule charges every instance, in component order', () => {
      const pricing = price([{ level: 'component', target: 'TT', calculation: 'perUnit', amount: 80 }]);
      expect(pricing.lineItems.map((l) => [l.itemKey, l.description, l.itemType, l.total])).toEqual([
        ['component:c1:TT', 'Tilt-turn sash', 'window', 80],
        ['component:c2:TT', 'Tilt-turn sash', 'window', 80],
      ]);
      expect(pricing.subtotal).toBe(160);
    });

    it('then doors and panels get their own line types', () => {
      const pricing = price(
        [
          { level: 'component', target: 'SD', calculation: 'perUnit', amount: 900 },
          { level: 'component', target: 'P', calculation: 'perUnit', amount: 120 },
        ],
        {
          width: 2000,
          height: 2200,
          components: [
            { id: 'door', componentId: 'SD', width: 1500, height: 2200 },
            { id: 'side', componentId: 'P', width: 500, height: 2200 },
          ],
        },
      );
      expect(pricing.lineItems.map((l) => [l.itemKey, l.itemType])).toEqual([['component:door:SD', 'door'], ['component:side:P', 'panel']]);
    });

    it('then an option rule charges each component carrying it, and a product option once', () => {
      const pricing = price(
        [
          { level: 'option', target: 'hr3', calculation: 'perUnit', amount: 25 },
          { level: 'option', target: 'screen', calculation: 'perUnit', amount: 35 },
        ],
        {
          ...twoSashes,
          components: [{ ...twoSashes.components[0], options: ['hr3'] }, { ...twoSashes.components[1], options: ['hr3'] }],
          options: ['screen'],
        },
      );
      expect(pricing.lineItems.map((l) => [l.itemKey, l.description, l.itemType, l.unitPrice])).toEqual([
        ['option:c1:hr3', 'Triple glazing', 'material', 25],
        ['option:c2:hr3', 'Triple glazing', 'material', 25],
        ['option:product:screen', 'Insect screen', 'material', 35],
      ]);
    });

    it('then an option nobody chose adds no line', () => {
      expect(price([{ level: 'option', target: 'screen', calculation: 'perUnit', amount: 35 }]).lineItems).toEqual([]);
    });
  });

  describe('given an area rule', () => {
    it('then it charges the rate per m² of what it applies to', () => {
      const pricing = price(
        [
          { level: 'template', calculation: 'area', rate: 100 }, // 1.68 m² → 168.00
          { level: 'component', target: 'TT', calculation: 'area', rate: 90 }, // 0.84 m² → 75.60 each
          { level: 'option', target: 'hr3', calculation: 'area', rate: 45 }, // on c2: 0.84 m² → 37.80
          { level: 'option', target: 'screen', calculation: 'area', rate: 10 }, // product: 1.68 m² → 16.80
        ],
        { ...twoSashes, components: [twoSashes.components[0], { ...twoSashes.components[1], options: ['hr3'] }], options: ['screen'] },
      );
      expect(lines(pricing)).toEqual([
        ['product:tpl_1:0', 168],
        ['component:c1:TT', 75.6],
        ['component:c2:TT', 75.6],
        ['option:c2:hr3', 37.8],
        ['option:product:screen', 16.8],
      ]);
      expect(pricing.subtotal).toBe(373.8);
    });
  });

  describe('given a tieredArea rule', () => {
    const tiered = [{ level: 'template', calculation: 'tieredArea', tiers: [{ upTo: 1, rate: 150 }, { upTo: 2, rate: 130 }, { upTo: null, rate: 110 }] }];
    /** The product's size with one sash in it (a configuration needs a component); only the product's area is priced. */
    const sized = (width: number, height: number) => ({ width, height, components: [{ id: 'c1', componentId: 'TT', width: 600, height }] });

    it('then an area exactly on a boundary takes the lower tier', () => {
      expect(price(tiered, sized(1000, 1000)).subtotal).toBe(150); // 1 m² × 150
    });

    it('then an area inside a middle tier takes that tier for the whole area', () => {
      expect(price(tiered, sized(1200, 1400)).subtotal).toBe(218.4); // 1.68 m² × 130
    });

    it('then an area beyond the last bound takes the open tier', () => {
      expect(price(tiered, sized(2500, 1000)).subtotal).toBe(275); // 2.5 m² × 110
    });

    it('then a component rule measures each component', () => {
      const pricing = price(
        [{ level: 'component', target: 'TT', calculation: 'tieredArea', tiers: [{ upTo: 0.5, rate: 200 }, { upTo: null, rate: 100 }] }],
        { width: 1200, height: 1400, components: [{ id: 'a', componentId: 'TT', width: 500, height: 1000 }, { id: 'b', componentId: 'TT', width: 700, height: 1000 }] },
      );
      expect(lines(pricing)).toEqual([['component:a:TT', 100], ['component:b:TT', 70]]); // 0.5 × 200, 0.7 × 100
    });
  });

  describe('given a runningMetre rule', () => {
    it('then it charges the rate per metre of perimeter', () => {
      const pricing = price([
        { level: 'template', calculation: 'runningMetre', rate: 12 }, // 2 × (1.2 + 1.4) = 5.2 m → 62.40
        { level: 'component', target: 'TT', calculation: 'runningMetre', rate: 8.5 }, // 2 × (0.6 + 1.4) = 4 m → 34.00
      ]);
      expect(lines(pricing)).toEqual([['product:tpl_1:0', 62.4], ['component:c1:TT', 34], ['component:c2:TT', 34]]);
    });
  });

  describe('given a material rule', () => {
    const rules = [
      { level: 'material', target: 'white', calculation: 'runningMetre', rate: 12 },
      { level: 'material', target: 'ral7016', calculation: 'perUnit', amount: 40 },
    ];

    it('then it charges once for each side the material is chosen for', () => {
      const pricing = price(rules, { ...twoSashes, insideColorId: 'white', outsideColorId: 'white' });
      expect(pricing.lineItems.map((l) => [l.itemKey, l.description, l.itemType, l.unitPrice])).toEqual([
        ['material:inside:white', 'White (inside)', 'material', 62.4],
        ['material:outside:white', 'White (outside)', 'material', 62.4],
      ]);
    });

    it('then a fixed rule charges once per configuration, on both sides or one (decisions §5)', () => {
      const fixed = [{ level: 'material', target: 'white', calculation: 'fixed', amount: 40 }];
      const both = price(fixed, { ...twoSashes, insideColorId: 'white', outsideColorId: 'white' });
      expect(both.lineItems.map((l) => [l.itemKey, l.description, l.unitPrice])).toEqual([['material:inside:white', 'White', 40]]);
      const outside = price(fixed, { ...twoSashes, insideColorId: undefined, outsideColorId: 'white' });
      expect(outside.lineItems.map((l) => [l.itemKey, l.description, l.unitPrice])).toEqual([['material:outside:white', 'White (outside)', 40]]);
    });

    it('then each side is priced by the material chosen for it', () => {
      const pricing = price(rules, { ...twoSashes, insideColorId: 'white', outsideColorId: 'ral7016' });
      expect(lines(pricing)).toEqual([['material:inside:white', 62.4], ['material:outside:ral7016', 40]]);
    });

    it('then no colour chosen means no material line', () => {
      expect(price(rules).lineItems).toEqual([]);
    });
  });

  describe('given a percentage rule', () => {
    it('then it charges a share of the lines before it, rounded half-up', () => {
      const pricing = price([
        { level: 'template', calculation: 'fixed', amount: 100 },
        { level: 'template', calculation: 'fixed', amount: 33.33 },
        { level: 'template', calculation: 'percentage', percent: 5 }, // 5% of 133.33 = 6.6665 → 6.67
      ]);
      expect(pricing.lineItems[2]).toEqual({
        description: '5% surcharge', quantity: 1, unitPrice: 6.67, total: 6.67,
        itemType: 'labor', itemKey: 'product:tpl_1:2', sortOffset: 20,
      });
      expect(pricing.subtotal).toBe(140);
    });

    it('then a later percentage includes an earlier one', () => {
      const pricing = price([
        { level: 'template', calculation: 'fixed', amount: 100 },
        { level: 'template', calculation: 'percentage', percent: 10 }, // 10.00
        { level: 'template', calculation: 'percentage', percent: 10 }, // 10% of 110 = 11.00
      ]);
      expect(pricing.lineItems.map((l) => l.total)).toEqual([100, 10, 11]);
    });

    it('then rules after it are not part of its base', () => {
      const pricing = price([
        { level: 'template', calculation: 'fixed', amount: 100 },
        { level: 'template', calculation: 'percentage', percent: 10 },
        { level: 'template', calculation: 'fixed', amount: 500 },
      ]);
      expect(pricing.lineItems.map((l) => l.total)).toEqual([100, 10, 500]);
    });
  });

  describe('given a rule marked as labour', () => {
    it('then its lines are labour whatever it prices', () => {
      const pricing = price([{ level: 'component', target: 'TT', calculation: 'perUnit', amount: 45, itemType: 'labor', description: 'Fitting' }]);
      expect(pricing.lineItems.map((l) => [l.description, l.itemType])).toEqual([['Fitting', 'labor'], ['Fitting', 'labor']]);
    });
  });

  describe('given amounts that are not whole cents', () => {
    it('then per-unit prices are computed in decimal and rounded half-up', () => {
      // 0.7 m² × 1.15 = 0.805 exactly → 0.81 (binary floats give 0.8049999… → 0.80)
      const pricing = price([{ level: 'component', target: 'TT', calculation: 'area', rate: 1.15 }], {
        width: 1200, height: 1400, components: [{ id: 'c1', componentId: 'TT', width: 700, height: 1000 }],
      });
      expect(pricing.lineItems[0]).toMatchObject({ unitPrice: 0.81, total: 0.81 });
    });

    it('then yen are rounded to whole yen', () => {
      const pricing = price([{ level: 'template', calculation: 'area', rate: 1234 }], twoSashes, 'JPY'); // 2073.12
      expect(pricing.lineItems[0]).toMatchObject({ unitPrice: 2073, total: 2073 });
    });

    it('then dinar keep three decimals', () => {
      const pricing = price([{ level: 'template', calculation: 'area', rate: 1.2345 }], twoSashes, 'KWD'); // 2.07396
      expect(pricing.lineItems[0]).toMatchObject({ unitPrice: 2.074, total: 2.074 });
    });
  });

  describe('given several identical units', () => {
    it('then every line carries the unit amount as quantity and totals are quantity × rounded unit price', () => {
      const pricing = price(
        [
          { level: 'template', calculation: 'fixed', amount: 33.333 }, // 33.33 each
          { level: 'template', calculation: 'percentage', percent: 10 }, // 3.333 → 3.33 each
        ],
        { ...twoSashes, unitAmount: 3 },
      );
      expect(pricing.lineItems.map((l) => [l.quantity, l.unitPrice, l.total])).toEqual([[3, 33.33, 99.99], [3, 3.33, 9.99]]);
      expect(pricing.subtotal).toBe(109.98);
    });
  });

  describe('given prices near the largest amount a JSON number holds exactly (10^15 minor units)', () => {
    /** 100 000 × 100 000 mm, the largest size a template allows: 10 000 m². */
    const largest = (unitAmount: number, widthMm = 100_000) => ({
      width: widthMm,
      height: widthMm,
      unitAmount,
      components: [{ id: 'c1', componentId: 'TT', width: widthMm, height: widthMm }],
    });
    const priceLarge = (rules: unknown[], input: Record<string, unknown>, currency = 'EUR') => {
      const template = catalog(rules, 100_000);
      return () => priceConfiguration(template, TEMPLATE_ID, configure(template, input), currency);
    };
    const refusedAt = (path: string, largestAmount: string) =>
      expect.objectContaining({ code: 'validation_error', fields: [{ path, message: expect.stringContaining(`(${largestAmount})`) }] });
    /** 999 999 999.99 per m² on 10 000 m² is 9 999 999 999 900.00 per unit */
    const area = { level: 'template', calculation: 'area', rate: 999_999_999.99 };

    it('given the reviewer\'s template (area, 0.01, 1000% surcharge) at the largest size and 999 units, then it is refused, not priced inexactly', () => {
      const rules = [area, { level: 'template', calculation: 'fixed', amount: 0.01 }, { level: 'template', calculation: 'percentage', percent: 1000 }];
      // one unit alone is past it (99 999 999 999 000.10 of surcharge), so no unitAmount would do: the configuration as a whole
      expect(priceLarge(rules, largest(999))).toThrow(refusedAt('', '10000000000000.00'));
      expect(priceLarge(rules, largest(1))).toThrow(AmountTooLarge);
    });

    it('given one unit priced at exactly the largest amount, then every amount is exact; one cent more is refused', () => {
      const atTheLimit = priceLarge([area, { level: 'template', calculation: 'fixed', amount: 100 }], largest(1))();
      expect(atTheLimit.lineItems.map((l) => [l.unitPrice, l.total])).toEqual([[9_999_999_999_900, 9_999_999_999_900], [100, 100]]);
      expect(atTheLimit.subtotal).toBe(10_000_000_000_000);
      expect(priceLarge([area, { level: 'template', calculation: 'fixed', amount: 100.01 }], largest(1))).toThrow(refusedAt('', '10000000000000.00'));
    });

    it('given a unit price that fits but too many units, then it is refused at unitAmount', () => {
      expect(priceLarge([area], largest(1))().subtotal).toBe(9_999_999_999_900);
      expect(priceLarge([area], largest(2))).toThrow(refusedAt('unitAmount', '10000000000000.00'));
    });

    it('given yen (no decimals), then the limit is 10^15 yen', () => {
      const perM2 = [{ level: 'template', calculation: 'area', rate: 1_000_000_000 }]; // 10^13 yen per unit
      expect(priceLarge(perM2, largest(100), 'JPY')().subtotal).toBe(1e15);
      expect(priceLarge(perM2, largest(101), 'JPY')).toThrow(refusedAt('unitAmount', '1000000000000000'));
    });

    it('given dinar (three decimals), then the limit is 10^12 dinar', () => {
      const perM2 = [{ level: 'template', calculation: 'area', rate: 1_000_000_000 }]; // 10 000 × 10 000 mm = 100 m²: 10^11 per unit
      expect(priceLarge(perM2, largest(10, 10_000), 'KWD')().subtotal).toBe(1e12);
      expect(priceLarge(perM2, largest(11, 10_000), 'KWD')).toThrow(refusedAt('unitAmount', '1000000000000.000'));
      expect(priceLarge([area], largest(1), 'KWD')).toThrow(refusedAt('', '1000000000000.000'));
    });
  });

  describe('given rules at several levels', () => {
    it('then lines follow rule order, then component order, with sort offsets in steps of 10', () => {
      const pricing = price([
        { level: 'component', target: 'TT', calculation: 'perUnit', amount: 1 },
        { level: 'template', calculation: 'fixed', amount: 2 },
      ]);
      expect(pricing.lineItems.map((l) => [l.itemKey, l.sortOffset])).toEqual([
        ['component:c1:TT', 0],
        ['component:c2:TT', 10],
        ['product:tpl_1:1', 20],
      ]);
    });
  });

  describe('given the example template and configuration of decisions §5', () => {
    it('then the breakdown is as worked out by hand', () => {
      const template = validateTemplate(exampleTemplateBody()).template!;
      const configuration = validateConfiguration(template, exampleConfigurationInput()).configuration!;

      const pricing = priceConfiguration(template, 'tpl_demo', configuration, 'EUR');

      const line = (description: string, unitPrice: number, itemType: string, itemKey: string, sortOffset: number) =>
        ({ description, quantity: 1, unitPrice, total: unitPrice, itemType, itemKey, sortOffset });
      expect(pricing.lineItems).toEqual([
        line('Frame', 50, 'other', 'product:tpl_demo:0', 0),
        line('Base price', 184.8, 'other', 'product:tpl_demo:1', 10), // 1.2 × 1.4 = 1.68 m² > 1.5 → 110/m²
        line('Tilt-turn sash', 75.6, 'window', 'component:c1:TT', 20), // 0.6 × 1.4 = 0.84 m² × 90
        line('Tilt-turn sash', 80, 'window', 'component:c1:TT', 30),
        line('Triple glazing', 37.8, 'material', 'option:c1:hr3', 40), // 0.84 m² × 45
        line('Insect screen', 35, 'material', 'option:product:screen', 50),
        line('Anthracite (outside)', 62.4, 'material', 'material:outside:ral7016', 60), // 5.2 m × 12
        line('Installation', 26.28, 'labor', 'product:tpl_demo:7', 70), // 5% of 525.60
      ]);
      expect(pricing.subtotal).toBe(551.88);
    });

    it.each([
      ['de', 'Grundpreis', 'Anthracite (außen)', '2,5 % Aufschlag'],
      ['nl', 'Basisprijs', 'Anthracite (buiten)', '2,5% toeslag'],
      ['en', 'Base price', 'Anthracite (outside)', '2.5% surcharge'],
      ['fr', 'Base price', 'Anthracite (outside)', '2.5% surcharge'],
    ])('then the lines whose rule names no description read in the session language: %s', (locale, basePrice, material, surcharge) => {
      const body = exampleTemplateBody();
      body.pricingRules[7] = { level: 'template', calculation: 'percentage', percent: 2.5 };
      const template = validateTemplate(body).template!;
      const configuration = validateConfiguration(template, exampleConfigurationInput()).configuration!;
      const descriptions = priceConfiguration(template, 'tpl_demo', configuration, 'EUR', locale).lineItems.map((l) => l.description);
      expect([descriptions[1], descriptions[6], descriptions[7]]).toEqual([basePrice, material, surcharge]);
      // The template's own words stay as written.
      expect([descriptions[0], descriptions[2]]).toEqual(['Frame', 'Tilt-turn sash']);
    });

    it('then a surcharge line names its percent as the template states it, without float noise', () => {
      const label = (percent: number) => {
        const body = exampleTemplateBody();
        body.pricingRules[7] = { level: 'template', calculation: 'percentage', percent };
        const template = validateTemplate(body).template!;
        const configuration = validateConfiguration(template, exampleConfigurationInput()).configuration!;
        return priceConfiguration(template, 'tpl_demo', configuration, 'EUR', 'en').lineItems[7].description;
      };
      expect([label(12.34567), label(0.1 + 0.2)]).toEqual(['12.34567% surcharge', '0.3% surcharge']);
    });

    it('then two units double every total', () => {
      const template = validateTemplate(exampleTemplateBody()).template!;
      const configuration = validateConfiguration(template, { ...exampleConfigurationInput(), unitAmount: 2 }).configuration!;
      const pricing = priceConfiguration(template, 'tpl_demo', configuration, 'EUR');
      expect(pricing.lineItems.every((l) => l.quantity === 2 && l.total === l.unitPrice * 2)).toBe(true);
      expect(pricing.subtotal).toBe(1103.76);
    });
  });
});
