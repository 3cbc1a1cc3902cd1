import { Configuration, validateConfiguration } from './configuration';
import { exampleConfigurationInput, exampleTemplateBody } from './example.fixture';
import { resolveConfiguration } from './resolve';
import { TemplateBody, validateTemplate } from './template';

describe('resolveConfiguration', () => {
  const template = validateTemplate(exampleTemplateBody()).template as TemplateBody;
  const configuration = validateConfiguration(template, exampleConfigurationInput()).configuration as Configuration;

  describe('given the example configuration of decisions §5', () => {
    it('then every id is replaced by what a person reads', () => {
      expect(resolveConfiguration(template, { ...configuration, notes: 'Back door side' })).toEqual({
        componentSelections: [
          {
            componentName: 'Tilt-turn sash', componentType: 'TT', width: 600, height: 1400,
            selectedOptions: [{ code: 'HR+++', name: 'Triple glazing', optionGroup: 'Glazing' }],
          },
          {
            componentName: 'Fixed glazing', componentType: 'F', width: 600, height: 1400,
            selectedOptions: [{ code: 'HR++', name: 'Double glazing', optionGroup: 'Glazing' }],
          },
        ],
        selectedOptions: [{ code: 'SCR', name: 'Insect screen' }],
        insideColor: { name: 'White' },
        outsideColor: { name: 'Anthracite' },
        notes: 'Back door side',
        selectedSection: 'Ground floor',
      });
    });
  });

  describe('given no colours and no section', () => {
    it('then they resolve to null', () => {
      const resolved = resolveConfiguration(template, { ...configuration, insideColorId: null, outsideColorId: null, section: null });
      expect(resolved).toMatchObject({ insideColor: null, outsideColor: null, selectedSection: null });
    });
  });

  describe('given several options', () => {
    it('then they are listed in the order of the template catalog', () => {
      const withAlarm: TemplateBody = {
        ...template,
        options: [{ id: 'zz-alarm', code: 'ALM', name: 'Alarm contact', optionGroup: 'extras' }, ...template.options],
      };
      const resolved = resolveConfiguration(withAlarm, { ...configuration, options: ['screen', 'zz-alarm'] });
      expect(resolved.selectedOptions.map((o) => o.name)).toEqual(['Alarm contact', 'Insect screen']);
    });
  });

  describe('given ids the template no longer knows', () => {
    it('then the raw ids are shown instead of being dropped', () => {
      const replaced: TemplateBody = { ...template, components: [], options: [], materials: [] };
      const resolved = resolveConfiguration(replaced, configuration);
      expect(resolved.componentSelections[0]).toMatchObject({
        componentName: 'TT',
        selectedOptions: [{ code: 'hr3', name: 'hr3', optionGroup: '' }],
      });
      expect(resolved.selectedOptions).toEqual([{ code: 'screen', name: 'screen' }]);
      expect(resolved.outsideColor).toEqual({ name: 'ral7016' });
    });
  });
});
