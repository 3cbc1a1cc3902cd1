import { canonicalJson } from '@lib/shared';
import { configHash } from './canonical-json';
import { validateConfiguration } from './configuration';
import { exampleConfigurationInput, exampleTemplateBody } from './example.fixture';
import { TemplateBody, validateTemplate } from './template';

describe('configHash', () => {
  const template = validateTemplate(exampleTemplateBody()).template as TemplateBody;
  const canonical = (input: unknown) => {
    const { configuration, errors } = validateConfiguration(template, input);
    if (!configuration) throw new Error(JSON.stringify(errors));
    return configuration;
  };

  it('given the example configuration, then its canonical JSON and hash are exactly these (stored hashes depend on them)', () => {
    const configuration = canonical(exampleConfigurationInput());
    const jcs =
      '{"components":[{"componentId":"TT","height":1400,"id":"c1","options":["hr3"],"width":600},' +
      '{"componentId":"F","height":1400,"id":"c2","options":["hr2"],"width":600}],"height":1400,' +
      '"insideColorId":"white","notes":"","options":["screen"],"outsideColorId":"ral7016",' +
      '"section":"Ground floor","unitAmount":1,"width":1200}';
    expect(canonicalJson(configuration)).toBe(jcs);
    expect(configHash(configuration)).toBe('sha256:cec1763cb5bd7e5e92fb8dd174df947e355b3910423ef4655c2029633858bfbd');
  });

  it('given the same configuration with its fields in another order, then the hash is the same', () => {
    const input = exampleConfigurationInput();
    const reordered = Object.fromEntries(Object.entries(input).reverse());
    reordered.components = input.components.map((c: Record<string, unknown>) => Object.fromEntries(Object.entries(c).reverse()));
    expect(configHash(canonical(reordered))).toBe(configHash(canonical(input)));
  });

  it('given the same options in another order or repeated, then the hash is the same', () => {
    const withAlarm = validateTemplate({
      ...exampleTemplateBody(),
      options: [...exampleTemplateBody().options, { id: 'alarm', code: 'ALM', name: 'Alarm contact', optionGroup: 'extras' }],
    }).template as TemplateBody;
    const hashOf = (options: string[]) => {
      const { configuration } = validateConfiguration(withAlarm, { ...exampleConfigurationInput(), options });
      return configHash(configuration!);
    };
    expect(hashOf(['screen', 'alarm'])).toBe(hashOf(['alarm', 'screen']));
    expect(hashOf(['alarm', 'screen', 'alarm'])).toBe(hashOf(['alarm', 'screen']));
  });

  it('given defaults left out or spelled out, then the hash is the same', () => {
    const { unitAmount, notes, ...rest } = exampleConfigurationInput();
    expect(unitAmount).toBe(1);
    expect(notes).toBe('');
    expect(configHash(canonical(rest))).toBe(configHash(canonical(exampleConfigurationInput())));
  });

  it('given any visible change, then the hash changes', () => {
    const base = configHash(canonical(exampleConfigurationInput()));
    expect(configHash(canonical({ ...exampleConfigurationInput(), width: 1201 }))).not.toBe(base);
    expect(configHash(canonical({ ...exampleConfigurationInput(), unitAmount: 2 }))).not.toBe(base);
    expect(configHash(canonical({ ...exampleConfigurationInput(), section: 'First floor' }))).not.toBe(base);
  });
});
