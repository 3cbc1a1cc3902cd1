import { validateConfiguration } from './configuration';
import { exampleConfigurationInput, exampleTemplateBody } from './example.fixture';
import { TemplateBody, validateTemplate } from './template';

function templateFrom(mutate: (body: Record<string, any>) => void = () => undefined): TemplateBody {
  const body = exampleTemplateBody();
  mutate(body);
  const { template, errors } = validateTemplate(body);
  if (!template) throw new Error(`test template is invalid: ${JSON.stringify(errors)}`);
  return template;
}

const template = templateFrom();

function errorsFor(mutate: (input: Record<string, any>) => void, on: TemplateBody = template) {
  const input = exampleConfigurationInput();
  mutate(input);
  return validateConfiguration(on, input).errors;
}

const error = (path: string, message: string) => ({ path, message: expect.stringContaining(message) });

describe('validateConfiguration', () => {
  describe('given the example configuration of decisions §5', () => {
    it('then it is valid and already canonical', () => {
      const { configuration, errors } = validateConfiguration(template, exampleConfigurationInput());
      expect(errors).toEqual([]);
      expect(configuration).toEqual(exampleConfigurationInput());
    });
  });

  describe('given only sizes and components', () => {
    it('then the defaults are filled in', () => {
      const { configuration, errors } = validateConfiguration(template, {
        width: 1000,
        height: 1000,
        components: [{ id: 'c1', componentId: 'F', width: 1000, height: 1000, options: ['hr2'] }],
      });
      expect(errors).toEqual([]);
      expect(configuration).toEqual({
        width: 1000,
        height: 1000,
        unitAmount: 1,
        components: [{ id: 'c1', componentId: 'F', width: 1000, height: 1000, options: ['hr2'] }],
        options: [],
        insideColorId: null,
        outsideColorId: null,
        notes: '',
        section: null,
      });
    });

    it('then null notes, colours and section mean none', () => {
      const { configuration } = validateConfiguration(template, {
        ...exampleConfigurationInput(), notes: null, insideColorId: null, outsideColorId: null, section: null,
      });
      expect(configuration).toMatchObject({ notes: '', insideColorId: null, outsideColorId: null, section: null });
    });
  });

  describe('given options listed twice or out of order', () => {
    it('then each list is de-duplicated and sorted', () => {
      const withAlarm = templateFrom((b) => b.options.push({ id: 'alarm', code: 'ALM', name: 'Alarm contact', optionGroup: 'extras' }));
      const { configuration, errors } = validateConfiguration(withAlarm, {
        ...exampleConfigurationInput(),
        options: ['screen', 'alarm', 'screen'],
      });
      expect(errors).toEqual([]);
      expect(configuration?.options).toEqual(['alarm', 'screen']);
    });

    it('then repeating the one option of a single-choice group is not a second choice', () => {
      const { configuration, errors } = validateConfiguration(template, {
        ...exampleConfigurationInput(),
        components: [{ id: 'c1', componentId: 'TT', width: 600, height: 1400, options: ['hr3', 'hr3'] }],
      });
      expect(errors).toEqual([]);
      expect(configuration?.components[0].options).toEqual(['hr3']);
    });
  });

  describe('given sizes outside the constraints', () => {
    it('then the product size must be whole millimetres within the template', () => {
      expect(errorsFor((c) => { c.width = 399; c.height = 2501; })).toEqual(expect.arrayContaining([
        error('width', 'at least 400 mm'),
        error('height', 'at most 2500 mm'),
      ]));
      expect(errorsFor((c) => (c.width = 1200.5))).toEqual([error('width', 'whole number of millimetres')]);
      expect(errorsFor((c) => delete c.height)).toEqual([error('height', 'is required')]);
    });

    it('then each component must fit its own constraints', () => {
      expect(errorsFor((c) => { c.components[0].width = 250; c.components[1].width = 950; })).toEqual([
        error('components[0].width', 'at least 300 mm'),
      ]);
    });

    it('then a component may not be taller than the product', () => {
      expect(errorsFor((c) => (c.components[1].height = 1500))).toEqual([
        error('components[1].height', 'must not exceed the product height (1400 mm)'),
      ]);
    });

    it('then components together may not be wider than the product', () => {
      expect(errorsFor((c) => (c.components[1].width = 700))).toEqual([
        error('components', 'the components are 1300 mm wide together, wider than the product (1200 mm)'),
      ]);
    });

    it('then components narrower than the product together are fine', () => {
      expect(errorsFor((c) => (c.components[1].width = 500))).toEqual([]);
    });
  });

  describe('given ids the template does not know', () => {
    it('then each is reported where it was given', () => {
      const errors = errorsFor((c) => {
        c.components[0].componentId = 'SD';
        c.components[1].options = ['hr2', 'hr4'];
        c.options = ['awning'];
        c.outsideColorId = 'gold';
      });
      expect(errors).toEqual([
        error('components[0].componentId', '"SD" is not a component'),
        error('components[1].options[1]', '"hr4" is not an option'),
        error('options[0]', '"awning" is not an option'),
        error('outsideColorId', '"gold" is not a material'),
      ]);
    });
  });

  describe('given options at the wrong scope', () => {
    it('then product options are refused on components and component options at product level', () => {
      const errors = errorsFor((c) => {
        c.components[0].options = ['hr3', 'screen'];
        c.options = ['hr2'];
      });
      expect(errors).toEqual([
        error('components[0].options[1]', '"Insect screen" applies to the whole product'),
        error('options[0]', '"Double glazing" applies to a component'),
      ]);
    });
  });

  describe('given required groups', () => {
    it('then every component needs an option from each required component group', () => {
      expect(errorsFor((c) => delete c.components[1].options)).toEqual([
        error('components[1].options', 'needs an option from "Glazing"'),
      ]);
    });

    it('then the product needs an option from each required product group', () => {
      const extrasRequired = templateFrom((b) => (b.optionGroups[1].required = true));
      expect(errorsFor((c) => (c.options = []), extrasRequired)).toEqual([error('options', 'needs an option from "Extras"')]);
    });
  });

  describe('given no components', () => {
    it('then a template built from components refuses the configuration, whether the list is empty or left out', () => {
      expect(errorsFor((c) => (c.components = []))).toEqual([error('components', 'needs at least one component')]);
      expect(errorsFor((c) => delete c.components)).toEqual([error('components', 'needs at least one component')]);
    });

    it('then a template without components takes a configuration without any', () => {
      const panel = templateFrom((b) => {
        b.components = [];
        b.optionGroups = b.optionGroups.filter((g: { scope: string }) => g.scope === 'product');
        b.options = b.options.filter((o: { optionGroup: string }) => o.optionGroup === 'extras');
        b.pricingRules = b.pricingRules.filter((r: { level: string; target?: string }) => r.level !== 'component' && r.target !== 'hr3');
      });
      const { configuration, errors } = validateConfiguration(panel, { width: 1200, height: 1400 });
      expect(errors).toEqual([]);
      expect(configuration?.components).toEqual([]);
    });
  });

  describe('given two options of a single-choice group', () => {
    it('then the second is refused', () => {
      expect(errorsFor((c) => (c.components[0].options = ['hr2', 'hr3']))).toEqual([
        error('components[0].options[1]', '"Glazing" allows only one option and "hr2" is already chosen'),
      ]);
    });
  });

  describe('given colours', () => {
    it('then a material is only accepted on a side it allows', () => {
      expect(errorsFor((c) => { c.insideColorId = 'ral7016'; c.outsideColorId = 'white'; })).toEqual([
        error('insideColorId', '"Anthracite" is only available on the outside'),
      ]);
    });
  });

  describe('given a section', () => {
    it('then it must be one of the template sections', () => {
      expect(errorsFor((c) => (c.section = 'Attic'))).toEqual([error('section', '"Attic" is not a section')]);
    });
  });

  describe('given notes', () => {
    it('then markup is stripped', () => {
      const { configuration } = validateConfiguration(template, {
        ...exampleConfigurationInput(),
        notes: '<b>Please</b> deliver <script>alert(1)</script>after 5 pm',
      });
      expect(configuration?.notes).toBe('Please deliver after 5 pm');
    });

    it('then more than 2000 characters are refused', () => {
      expect(errorsFor((c) => (c.notes = 'n'.repeat(2001)))).toEqual([error('notes', 'at most 2000 characters')]);
    });
  });

  describe('given component instance ids', () => {
    it('then they must be unique', () => {
      expect(errorsFor((c) => (c.components[1].id = 'c1'))).toEqual([error('components[1].id', '"c1" is already used')]);
    });

    it('then "product" is reserved for product-level item keys', () => {
      expect(errorsFor((c) => (c.components[0].id = 'product'))).toEqual([error('components[0].id', 'reserved')]);
    });
  });

  describe('given more than 50 components', () => {
    it('then the list is refused', () => {
      const components = Array.from({ length: 51 }, (_, i) => ({ id: `c${i}`, componentId: 'F', width: 200, height: 400, options: ['hr2'] }));
      expect(errorsFor((c) => (c.components = components))).toEqual([error('components', 'at most 50 entries')]);
    });
  });

  describe('given a unit amount', () => {
    it.each([0, 1000, 2.5, '3'])('then %p is refused', (unitAmount) => {
      expect(errorsFor((c) => (c.unitAmount = unitAmount))).toEqual([error('unitAmount', '')]);
    });

    it('then 999 identical units are accepted', () => {
      expect(errorsFor((c) => (c.unitAmount = 999))).toEqual([]);
    });
  });

  describe('given unknown fields', () => {
    it('then each is refused at its path', () => {
      const errors = errorsFor((c) => {
        c.price = 10;
        c.components[1].colour = 'red';
      });
      expect(errors).toEqual([error('price', 'unknown field'), error('components[1].colour', 'unknown field')]);
    });
  });

  describe('given something other than an object', () => {
    it('then the error sits at the root path', () => {
      expect(validateConfiguration(template, 'wide').errors).toEqual([error('', 'must be an object')]);
    });
  });
});
