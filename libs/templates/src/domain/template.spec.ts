import { exampleTemplateBody } from './example.fixture';
import { validateTemplate } from './template';

function errorsFor(mutate: (body: Record<string, any>) => void) {
  const body = exampleTemplateBody();
  mutate(body);
  return validateTemplate(body).errors;
}

const error = (path: string, message: string) => ({ path, message: expect.stringContaining(message) });

describe('validateTemplate', () => {
  describe('given the example template of decisions §5', () => {
    it('then it is accepted unchanged', () => {
      const { template, errors } = validateTemplate(exampleTemplateBody());
      expect(errors).toEqual([]);
      expect(template).toEqual(exampleTemplateBody());
    });
  });

  describe('given only the required fields', () => {
    it('then the optional lists default to empty and the description to ""', () => {
      const { template, errors } = validateTemplate({
        name: 'Panel',
        slug: 'panel',
        productCategory: 'panel',
        constraints: { minWidth: 100, maxWidth: 200, minHeight: 100, maxHeight: 200 },
      });
      expect(errors).toEqual([]);
      expect(template).toEqual({
        name: 'Panel', slug: 'panel', description: '', productCategory: 'panel', materialTags: [],
        constraints: { minWidth: 100, maxWidth: 200, minHeight: 100, maxHeight: 200 },
        components: [], optionGroups: [], options: [], materials: [], sections: [], pricingRules: [],
      });
    });

    it('then option groups are neither required nor multiple unless said so', () => {
      const { template } = validateTemplate({
        ...exampleTemplateBody(),
        optionGroups: [{ id: 'glazing', name: 'Glazing', scope: 'component' }, { id: 'extras', name: 'Extras', scope: 'product' }],
      });
      expect(template?.optionGroups.map((g) => [g.required, g.multiple])).toEqual([[false, false], [false, false]]);
    });
  });

  describe('given null for a field', () => {
    it.each(['name', 'slug', 'productCategory', 'constraints', 'materialTags', 'components', 'optionGroups', 'options', 'materials', 'sections', 'pricingRules'])(
      'then null %s is refused, not stored or taken as empty',
      (key) => {
        expect(errorsFor((body) => { body[key] = null; })).toContainEqual(error(key, 'must be'));
      },
    );

    it.each([
      ['components', 'name'], ['components', 'type'], ['components', 'constraints'],
      ['optionGroups', 'scope'], ['optionGroups', 'required'], ['options', 'optionGroup'],
      ['materials', 'side'], ['pricingRules', 'calculation'], ['pricingRules', 'amount'],
    ])('then null %s[0].%s is refused', (list, key) => {
      expect(errorsFor((body) => { body[list][0][key] = null; })).toContainEqual(error(`${list}[0].${key}`, 'must be'));
    });

    it('then a null description is the empty description', () => {
      const { template, errors } = validateTemplate({ ...exampleTemplateBody(), description: null });
      expect(errors).toEqual([]);
      expect(template?.description).toBe('');
    });
  });

  describe('given free text with markup', () => {
    it('then the stored text is plain', () => {
      const { template, errors } = validateTemplate({
        ...exampleTemplateBody(),
        name: '<b>Tilt-turn</b> window<script>alert(1)</script>',
        description: '<p>uPVC &amp; aluminium</p>',
        components: [{ ...exampleTemplateBody().components[0], name: '<i>Sash</i>' }, exampleTemplateBody().components[1]],
        pricingRules: [{ level: 'template', calculation: 'fixed', amount: 50, description: '<img src=x onerror=alert(1)>Frame' }],
      });
      expect(errors).toEqual([]);
      expect(template?.name).toBe('Tilt-turn window');
      expect(template?.description).toBe('uPVC & aluminium');
      expect(template?.components[0].name).toBe('Sash');
      expect(template?.pricingRules[0].description).toBe('Frame');
    });

    it('then a name that is only markup is empty', () => {
      expect(errorsFor((b) => (b.name = '<script>x</script>'))).toEqual([error('name', 'must not be empty')]);
    });
  });

  describe('given a body that is not an object', () => {
    it('then the error sits at the root path', () => {
      expect(validateTemplate([1, 2]).errors).toEqual([error('', 'must be an object')]);
    });
  });

  describe('given wrong top-level fields', () => {
    it('then each is reported at its path', () => {
      const errors = errorsFor((b) => {
        delete b.name;
        b.slug = 'Tilt Turn';
        b.description = 'x'.repeat(2001);
        b.productCategory = 7;
        b.materialTags = 'uPVC';
        b.colour = 'red';
      });
      expect(errors).toEqual(expect.arrayContaining([
        error('name', 'is required'),
        error('slug', 'lowercase'),
        error('description', 'at most 2000 characters'),
        error('productCategory', 'must be a string'),
        error('materialTags', 'must be an array'),
        error('colour', 'unknown field'),
      ]));
      expect(errors).toHaveLength(6);
    });

    it('then a name over 200 characters is refused', () => {
      expect(errorsFor((b) => (b.name = 'x'.repeat(201)))).toEqual([error('name', 'at most 200 characters')]);
    });

    it('then a rule names its field, as the DTOs do, and an unknown key is told so without one', () => {
      const errors = errorsFor((b) => {
        delete b.name;
        b.productCategory = 7;
        b.components[0].constraints.minWidth = -1;
        b.colour = 'red';
      });
      expect(errors).toEqual(expect.arrayContaining([
        { path: 'name', message: 'name is required' },
        { path: 'productCategory', message: 'productCategory must be a string' },
        { path: 'components[0].constraints.minWidth', message: 'minWidth must be at least 1 mm' },
        { path: 'colour', message: 'unknown field' },
      ]));
      expect(errorsFor((b) => (b.pricingRules[0].target = 'F'))).toContainEqual({ path: 'pricingRules[0].target', message: 'target does not apply to template rules' });
    });

    it('then a text over ten times its limit is refused as too long without being stripped first', () => {
      // all markup: stripped, it would be empty; unstripped it is 2,100 characters
      expect(errorsFor((b) => (b.name = '<b></b>'.repeat(300)))).toEqual([{ path: 'name', message: 'name must be at most 200 characters' }]);
    });

    it('then text limits count characters, not UTF-16 code units: 200 emoji are a name, 201 are not', () => {
      expect(errorsFor((b) => (b.name = '😀'.repeat(200)))).toEqual([]);
      expect(errorsFor((b) => (b.name = '😀'.repeat(201)))).toEqual([{ path: 'name', message: 'name must be at most 200 characters' }]);
    });
  });

  describe('given size constraints', () => {
    it('then sizes must be positive whole millimetres', () => {
      const errors = errorsFor((b) => {
        b.constraints.minWidth = 0;
        b.components[1].constraints.minWidth = 200.5;
        b.components[1].constraints.maxHeight = '2500';
      });
      expect(errors).toEqual([
        error('constraints.minWidth', 'at least 1 mm'),
        error('components[1].constraints.minWidth', 'whole number of millimetres'),
        error('components[1].constraints.maxHeight', 'whole number of millimetres'),
      ]);
    });

    it('then a minimum above its maximum is refused', () => {
      const errors = errorsFor((b) => {
        b.constraints.minHeight = 3000;
        b.components[0].constraints.minWidth = 1600;
      });
      expect(errors).toEqual([
        error('constraints.minHeight', 'must not exceed maxHeight (2500 mm)'),
        error('components[0].constraints.minWidth', 'must not exceed maxWidth (1500 mm)'),
      ]);
    });

    it('then a component whose smallest size exceeds the largest product is refused, since it could never fit', () => {
      const errors = errorsFor((b) => {
        b.components[0].constraints.minHeight = 2600;
        b.components[0].constraints.maxHeight = 3000;
        b.components[1].constraints.minWidth = 3001;
        b.components[1].constraints.maxWidth = 3500;
      });
      expect(errors).toEqual([
        error('components[0].constraints.minHeight', "must not exceed the product's maxHeight (2500 mm)"),
        error('components[1].constraints.minWidth', "must not exceed the product's maxWidth (3000 mm)"),
      ]);
    });

    it('then a component that fits the largest product exactly is accepted', () => {
      expect(
        errorsFor((b) => {
          b.components[1].constraints.minWidth = 3000;
          b.components[1].constraints.minHeight = 2500;
        }),
      ).toEqual([]);
    });

    it('then missing constraints are reported', () => {
      expect(errorsFor((b) => delete b.components[0].constraints)).toEqual([error('components[0].constraints', 'is required')]);
    });
  });

  describe('given catalog entries', () => {
    it('then ids must be unique within their list', () => {
      const errors = errorsFor((b) => {
        b.components[1].id = 'TT';
        b.optionGroups[1].id = 'glazing';
        b.options[1].id = 'hr2';
        b.materials[1].id = 'white';
        b.sections = ['Ground floor', 'Ground floor'];
        b.materialTags = ['uPVC', 'uPVC'];
        b.pricingRules = [];
      });
      expect(errors).toEqual(expect.arrayContaining([
        error('components[1].id', '"TT" is already used at index 0'),
        error('optionGroups[1].id', '"glazing" is already used'),
        error('options[1].id', '"hr2" is already used'),
        error('materials[1].id', '"white" is already used'),
        error('sections[1]', '"Ground floor" is already used'),
        error('materialTags[1]', '"uPVC" is already used'),
      ]));
    });

    it('then ids may not contain ":", which separates the parts of an item key', () => {
      expect(errorsFor((b) => (b.materials[0].id = 'ral:9016'))).toEqual([error('materials[0].id', 'letters, digits')]);
    });

    it('then component types, scopes and sides must be known codes', () => {
      const errors = errorsFor((b) => {
        b.components[0].type = 'XX';
        b.optionGroups[0].scope = 'everywhere';
        b.optionGroups[0].multiple = 'yes';
        b.materials[0].side = 'top';
      });
      expect(errors).toEqual([
        error('components[0].type', 'one of "F", "TT"'),
        error('optionGroups[0].scope', 'one of "component", "product"'),
        error('optionGroups[0].multiple', 'true or false'),
        error('materials[0].side', 'one of "inside", "outside", "both"'),
      ]);
    });

    it('then an option must belong to an existing group', () => {
      expect(errorsFor((b) => (b.options[2].optionGroup = 'accessories'))).toEqual([
        error('options[2].optionGroup', '"accessories" is not an option group'),
      ]);
    });

    it('then a required group without options is refused, since no configuration could fill it', () => {
      const errors = errorsFor((b) => {
        b.optionGroups.push({ id: 'handles', name: 'Handles', scope: 'component', required: true, multiple: false });
      });
      expect(errors).toEqual([error('optionGroups[2].required', 'has no options')]);
    });

    it('then a required group chosen per component is refused in a template without components, since no configuration could fill it', () => {
      const errors = errorsFor((b) => {
        b.components = [];
        b.pricingRules = b.pricingRules.filter((rule: { level: string }) => rule.level !== 'component');
      });
      expect(errors).toEqual([error('optionGroups[0].required', 'has no components')]);
      // Chosen for the product, the same group can be filled.
      expect(errorsFor((b) => {
        b.components = [];
        b.pricingRules = b.pricingRules.filter((rule: { level: string }) => rule.level !== 'component');
        b.optionGroups[0].scope = 'product';
      })).toEqual([]);
    });

    it('then unknown fields inside entries are refused', () => {
      expect(errorsFor((b) => (b.options[0].price = 10))).toEqual([error('options[0].price', 'unknown field')]);
    });

    it('then a list longer than 200 entries is refused', () => {
      const errors = errorsFor((b) => {
        b.sections = Array.from({ length: 201 }, (_, i) => `Floor ${i}`);
      });
      expect(errors).toEqual([error('sections', 'at most 200 entries')]);
    });
  });

  describe('given pricing rules', () => {
    const rulesErrors = (...rules: unknown[]) => errorsFor((b) => (b.pricingRules = rules));

    it('then each rule target must exist at its level', () => {
      const errors = rulesErrors(
        { level: 'component', target: 'SD', calculation: 'perUnit', amount: 1 },
        { level: 'option', target: 'hr4', calculation: 'perUnit', amount: 1 },
        { level: 'material', target: 'TT', calculation: 'perUnit', amount: 1 },
        { level: 'option', calculation: 'perUnit', amount: 1 },
        { level: 'template', target: 'TT', calculation: 'fixed', amount: 1 },
      );
      expect(errors).toEqual([
        error('pricingRules[0].target', '"SD" is not a component'),
        error('pricingRules[1].target', '"hr4" is not an option'),
        error('pricingRules[2].target', '"TT" is not a material'),
        error('pricingRules[3].target', 'is required'),
        error('pricingRules[4].target', 'does not apply to template rules'),
      ]);
    });

    it('then each calculation needs its own value and no other', () => {
      const errors = rulesErrors(
        { level: 'template', calculation: 'fixed', rate: 5 },
        { level: 'template', calculation: 'area' },
        { level: 'template', calculation: 'percentage', percent: 5, amount: 3 },
        { level: 'template', calculation: 'hourly', amount: 3 },
      );
      expect(errors).toEqual([
        error('pricingRules[0].rate', 'does not apply to fixed rules'),
        error('pricingRules[0].amount', 'is required'),
        error('pricingRules[1].rate', 'is required'),
        error('pricingRules[2].amount', 'does not apply to percentage rules'),
        error('pricingRules[3].calculation', 'must be one of'),
      ]);
    });

    it('then money amounts must be finite and not negative', () => {
      const errors = rulesErrors(
        { level: 'template', calculation: 'fixed', amount: -1 },
        { level: 'template', calculation: 'area', rate: Number.POSITIVE_INFINITY },
        { level: 'component', target: 'TT', calculation: 'perUnit', amount: '80' },
        { level: 'template', calculation: 'percentage', percent: -5 },
      );
      expect(errors).toEqual([
        error('pricingRules[0].amount', 'at least 0'),
        error('pricingRules[1].rate', 'finite number'),
        error('pricingRules[2].amount', 'finite number'),
        error('pricingRules[3].percent', 'at least 0'),
      ]);
    });

    it('then percentage rules are template-level and perUnit rules are not', () => {
      const errors = rulesErrors(
        { level: 'component', target: 'TT', calculation: 'percentage', percent: 5 },
        { level: 'template', calculation: 'perUnit', amount: 5 },
      );
      expect(errors).toEqual([
        error('pricingRules[0].calculation', 'template level only'),
        error('pricingRules[1].calculation', 'use fixed at template level'),
      ]);
    });

    it('then tiers ascend and end with an open tier', () => {
      const errors = rulesErrors(
        { level: 'template', calculation: 'tieredArea', tiers: [{ upTo: 2, rate: 1 }, { upTo: 1, rate: 1 }, { upTo: null, rate: 1 }] },
        { level: 'template', calculation: 'tieredArea', tiers: [{ upTo: 1, rate: 1 }, { upTo: 2, rate: 1 }] },
        { level: 'template', calculation: 'tieredArea', tiers: [{ upTo: null, rate: 1 }, { upTo: 2, rate: 1 }] },
        { level: 'template', calculation: 'tieredArea', tiers: [] },
        { level: 'template', calculation: 'tieredArea', tiers: [{ upTo: 0, rate: 1 }, { upTo: null, rate: -2 }] },
      );
      expect(errors).toEqual([
        error('pricingRules[0].tiers[1].upTo', "greater than the previous tier's upTo (2)"),
        error('pricingRules[1].tiers[1].upTo', 'must be null'),
        error('pricingRules[2].tiers[0].upTo', 'only the last tier may be open-ended'),
        error('pricingRules[2].tiers[1].upTo', 'must be null'),
        error('pricingRules[3].tiers', 'at least one tier'),
        error('pricingRules[4].tiers[0].upTo', 'positive number of square metres'),
        error('pricingRules[4].tiers[1].rate', 'at least 0'),
      ]);
    });

    it('then an item type other than labor can only be set on template rules', () => {
      const errors = rulesErrors(
        { level: 'template', calculation: 'fixed', amount: 1, itemType: 'separator' },
        { level: 'component', target: 'TT', calculation: 'perUnit', amount: 1, itemType: 'labor' },
        { level: 'option', target: 'hr2', calculation: 'perUnit', amount: 1, itemType: 'door' },
        { level: 'template', calculation: 'percentage', percent: 1, itemType: 'other' },
        { level: 'template', calculation: 'fixed', amount: 1, itemType: 'service' },
      );
      expect(errors).toEqual([
        error('pricingRules[2].itemType', 'only "labor"'),
        error('pricingRules[3].itemType', 'only "labor"'),
        error('pricingRules[4].itemType', 'must be one of'),
      ]);
    });
  });
});
