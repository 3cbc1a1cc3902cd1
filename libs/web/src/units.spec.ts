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

  it('refuses what is not a number instead of guessing', () => {
    for (const text of ['', 'abc', '12a', '-5', '1.2.3']) expect(parseSizeInput(text, 'metric')).toBeNull();
  });

  it('keeps a size that is shown in inches and typed back unchanged within a millimetre', () => {
    for (const mm of [400, 999, 1200, 2500, 3000]) {
      expect(Math.abs(parseSizeInput(sizeInputValue(mm, 'imperial'), 'imperial')! - mm)).toBeLessThanOrEqual(2);
    }
  });
});
