import { formatSize, parseSizeInput, sizeInputValue } from './client/units';

describe('sizes in the unit of the organization', () => {
  it('shows millimetres as they are and inches with one decimal', () => {
    expect(sizeInputValue(1200, 'metric')).toBe('1200');
    expect(sizeInputValue(1200, 'imperial')).toBe('47.2');
    expect(formatSize(3000, 'metric', 'en')).toBe('3,000 mm');
    expect(formatSize(3000, 'imperial', 'nl')).toBe('118,1 in');
  });

  it('reads what the customer typed back as whole millimetres, with a decimal point or comma', () => {
    expect(parseSizeInput('1200', 'metric')).toBe(1200);
    expect(parseSizeInput(' 50 ', 'imperial')).toBe(1270);
    expect(parseSizeInput('47,2', 'imperial')).toBe(1199);
    expect(parseSizeInput('47.25', 'imperial')).toBe(1200);
  });

  it('reads millimetres with the thousands separator of the page language, as the hints write them', () => {
    expect(parseSizeInput('1.500', 'metric', { locale: 'de' })).toBe(1500);
    expect(parseSizeInput('1.500', 'metric', { locale: 'nl' })).toBe(1500);
    expect(parseSizeInput('1,500', 'metric', { locale: 'en' })).toBe(1500);
    expect(parseSizeInput('12.000', 'metric', { locale: 'de' })).toBe(12000);
    for (const locale of ['en', 'de', 'nl']) {
      const hint = formatSize(3000, 'metric', locale).replace(' mm', '');
      expect(parseSizeInput(hint, 'metric', { locale })).toBe(3000);
    }
    // Not in thousands: a decimal as before.
    expect(parseSizeInput('1200,4', 'metric', { locale: 'de' })).toBe(1200);
    expect(parseSizeInput('1.5', 'metric', { locale: 'en' })).toBe(2);
    expect(parseSizeInput('1.50', 'metric', { locale: 'de' })).toBe(2);
  });

  it('writes inches in the input with the decimal separator of the page, and reads both', () => {
    expect(sizeInputValue(1200, 'imperial', 'nl')).toBe('47,2');
    expect(sizeInputValue(1200, 'imperial', 'de')).toBe('47,2');
    expect(sizeInputValue(1200, 'imperial', 'en')).toBe('47.2');
    expect(sizeInputValue(1200, 'metric', 'de')).toBe('1200');
    expect(parseSizeInput('47,2', 'imperial', { locale: 'en' })).toBe(1199);
    expect(parseSizeInput('47.2', 'imperial', { locale: 'nl' })).toBe(1199);
  });

  it('keeps the current millimetres when the inches shown for them are typed back', () => {
    // A window of 40.2 in (1021 mm) shared evenly is 510 + 511 mm, both shown as 20.1 in.
    expect([sizeInputValue(510, 'imperial'), sizeInputValue(511, 'imperial')]).toEqual(['20.1', '20.1']);
    expect(parseSizeInput('20.1', 'imperial')).toBe(511);
    expect(parseSizeInput('20.1', 'imperial', { current: 510 })).toBe(510);
    expect(parseSizeInput('20,1', 'imperial', { current: 511, locale: 'de' })).toBe(511);
    // Another value is converted as it is.
    expect(parseSizeInput('20.2', 'imperial', { current: 510 })).toBe(513);
    expect(parseSizeInput('20.1', 'imperial', { current: null })).toBe(511);
  });

  it('refuses what is not a number instead of guessing', () => {
    for (const text of ['', 'abc', '12a', '-5', '1.2.3']) expect(parseSizeInput(text, 'metric')).toBeNull();
  });

  it('takes a limit typed in inches exactly as it is shown as that limit, so the customer can enter it', () => {
    const limits = { min: 400, max: 1500 };
    expect([formatSize(400, 'imperial', 'en'), formatSize(1500, 'imperial', 'de')]).toEqual(['15.7 in', '59,1 in']);
    expect(parseSizeInput('15.7', 'imperial')).toBe(399);
    expect(parseSizeInput('59.1', 'imperial')).toBe(1501);
    expect(parseSizeInput('15.7', 'imperial', { limits })).toBe(400);
    expect(parseSizeInput('59,1', 'imperial', { limits })).toBe(1500);
    expect(parseSizeInput('15.70', 'imperial', { limits })).toBe(400);
    // Anything else is converted as it is: a value below the shown minimum is still refused by the API.
    expect(parseSizeInput('15.6', 'imperial', { limits })).toBe(396);
    expect(parseSizeInput('59.2', 'imperial', { limits })).toBe(1504);
    expect(parseSizeInput('47.2', 'imperial', { limits })).toBe(1199);
    expect(parseSizeInput('1500', 'metric', { limits })).toBe(1500);
  });

  it('accepts every limit as shown in inches, whatever the limits are', () => {
    for (let limit = 1; limit <= 5000; limit++) {
      const shown = formatSize(limit, 'imperial', 'en').replace(' in', '');
      expect(sizeInputValue(limit, 'imperial')).toBe(shown);
      const asMin = parseSizeInput(shown, 'imperial', { limits: { min: limit, max: 10_000 } })!;
      const asMax = parseSizeInput(shown, 'imperial', { limits: { min: 0, max: limit } })!;
      if (asMin < limit || asMax > limit) throw new Error(`${limit} mm is shown as ${shown} in, read back as ${asMin}/${asMax} mm`);
    }
  });

  it('keeps a size that is shown in inches and typed back unchanged within a millimetre', () => {
    for (const mm of [400, 999, 1200, 2500, 3000]) {
      expect(Math.abs(parseSizeInput(sizeInputValue(mm, 'imperial'), 'imperial')! - mm)).toBeLessThanOrEqual(2);
    }
  });
});
