import { AmountTooLarge } from '@lib/shared';
import { validateConfiguration } from '@lib/templates/domain/configuration';
import { TooManyBaseLines } from '@lib/templates/domain/pricing';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import { fieldErrorsOf, localizeFieldMessage, placeFor } from './client/field-messages';
import { formatSize } from './client/units';
import { VALIDATION } from './client/validation.messages';

const inches = (mm: number) => formatSize(mm, 'imperial', 'de');
const millimetres = (mm: number) => formatSize(mm, 'metric', 'en');

/** What the API answers for a configuration (the same validation the PUT runs). */
function apiErrors(change: (configuration: Record<string, any>) => void) {
  const configuration = exampleConfigurationInput();
  change(configuration);
  return validateConfiguration(exampleTemplateBody() as any, configuration).errors;
}

describe('validation messages of the API in the page language', () => {
  it('re-words the size rules with the limit in the organization unit', () => {
    const [tooWide] = apiErrors((c) => (c.width = 5000));
    expect(tooWide.path).toBe('width');
    expect(localizeFieldMessage(tooWide.message, VALIDATION.en, millimetres)).toBe('Must be at most 3,000 mm.');
    expect(localizeFieldMessage(tooWide.message, VALIDATION.de, inches)).toBe('Höchstens 118,1 in.');

    const [tooNarrow] = apiErrors((c) => (c.components[0].width = 100));
    expect([tooNarrow.path, localizeFieldMessage(tooNarrow.message, VALIDATION.nl, millimetres)]).toEqual(['components[0].width', 'Minimaal 300 mm.']);
  });

  it('re-words the layout and option rules', () => {
    const [together] = apiErrors((c) => (c.components[1].width = 700));
    expect(localizeFieldMessage(together.message, VALIDATION.en, millimetres)).toBe('Together the components are 1,300 mm wide, more than the window (1,200 mm).');
    const [glazing] = apiErrors((c) => (c.components[0].options = []));
    expect([glazing.path, localizeFieldMessage(glazing.message, VALIDATION.de, millimetres)]).toEqual(['components[0].options', 'Bitte eine Option aus „Glazing“ wählen.']);
    const [tall] = apiErrors((c) => (c.components[0].height = 1500));
    expect(localizeFieldMessage(tall.message, VALIDATION.en, millimetres)).toBe('Can be at most as tall as the window (1,400 mm).');
  });

  it('asks for a whole number where only one is taken, and for a number where a decimal is fine', () => {
    expect(localizeFieldMessage('must be a whole number', VALIDATION.en, millimetres)).toBe('Enter a whole number.');
    expect(localizeFieldMessage('must be a whole number', VALIDATION.de, millimetres)).toBe('Bitte eine ganze Zahl eingeben.');
    expect(localizeFieldMessage('must be a number', VALIDATION.nl, inches)).toBe('Vul een getal in.');
  });

  it('re-words the refusals of a price: too many lines, too large an amount', () => {
    const lines = new TooManyBaseLines(241).details!.fields as Array<{ path: string; message: string }>;
    expect([lines[0].path, localizeFieldMessage(lines[0].message, VALIDATION.de, millimetres)]).toEqual([
      'components',
      'Dieses Fenster ergäbe 241 Preispositionen, mehr als die 200, die ein Preis haben kann. Bitte weniger Elemente oder Optionen wählen.',
    ]);
    const [large] = new AmountTooLarge('EUR', 'unitAmount').fields;
    expect(localizeFieldMessage(large.message, VALIDATION.nl, millimetres)).toBe('Deze prijs is te hoog. Kies minder stuks of een kleiner raam.');
  });

  it('re-words the length limit of the configuration notes, as the template checks word it', () => {
    const [notes] = apiErrors((c) => (c.notes = 'x'.repeat(2001)));
    expect(notes).toEqual({ path: 'notes', message: 'notes must be at most 2000 characters' });
    expect(localizeFieldMessage(notes.message, VALIDATION.de, millimetres)).toBe(localizeFieldMessage('name must be shorter than or equal to 2000 characters', VALIDATION.de, millimetres));
    expect(localizeFieldMessage(notes.message, VALIDATION.de, millimetres)).not.toMatch(/characters/);
  });

  it('shows a message no rule knows as the API wrote it', () => {
    expect(localizeFieldMessage('something new', VALIDATION.de, millimetres)).toBe('something new');
  });

  it('puts an error at its field, else at the nearest parent the page shows, else above the form', () => {
    const known = new Set(['width', 'components[0].options', 'components']);
    expect(placeFor('width', (p) => known.has(p))).toBe('width');
    expect(placeFor('components[0].options[1]', (p) => known.has(p))).toBe('components[0].options');
    expect(placeFor('components[3].id', (p) => known.has(p))).toBe('components');
    expect(placeFor('section', (p) => known.has(p))).toBeNull();
  });

  it('reads details.fields of the error envelope and nothing else', () => {
    const envelope = { error: { code: 'validation_error', message: 'x', details: { fields: [{ path: 'email', message: 'email must be a valid e-mail address' }, { path: 1 }] } } };
    expect(fieldErrorsOf(envelope)).toEqual([{ path: 'email', message: 'email must be a valid e-mail address' }]);
    expect(fieldErrorsOf({ error: { code: 'conflict' } })).toEqual([]);
    expect(fieldErrorsOf(null)).toEqual([]);
  });
});
