import { dateTimeFormat, moneyFormat, unitPriceFormat } from './client/formats';

/** The customer pages show amounts as the API stores them and as the PDF prints them. */
describe('the customer pages\' number formats', () => {
  it.each([
    ['de', 'HUF', 2013.15, '2.013,15 HUF'],
    ['en', 'IQD', 1250, 'IQD 1,250.000'],
    ['en', 'JPY', 552, '¥552'],
    ['nl', 'EUR', 551.88, '€ 551,88'],
  ] as const)('given %s and %s, then an amount has exactly the minor unit of the currency', (locale, currency, amount, shown) => {
    expect(moneyFormat(locale, currency).format(amount).replace(/[\u00a0\u202f]/g, ' ')).toBe(shown);
  });

  it('given a unit price stored with more decimals than cents, then all of them are shown', () => {
    expect(unitPriceFormat('en', 'EUR').format(0.125)).toBe('€0.125');
    expect(unitPriceFormat('en', 'EUR').format(2)).toBe('€2.00');
  });

  it('given the moment a quote expires, then the time of day is shown with the date and the time zone it is in', () => {
    const shown = dateTimeFormat('en').format(Date.UTC(2026, 2, 24, 9, 0));
    expect(shown).toMatch(/2026/);
    expect(shown).toMatch(/\d{1,2}:\d{2}/);
    const zone = new Intl.DateTimeFormat('en', { timeZoneName: 'short' }).formatToParts(Date.UTC(2026, 2, 24, 9, 0)).find((part) => part.type === 'timeZoneName')!.value;
    expect(shown).toContain(zone);
  });
});
