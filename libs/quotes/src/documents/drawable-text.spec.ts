import { CURRENCY_CODES } from '@lib/shared';
import { DOCUMENT_LOCALES, formatMoney, formatUnitPrice } from './document-locale';
import { drawable } from './drawable-text';

describe('drawable (text for the quote PDF fonts)', () => {
  it('given Latin, Greek, Cyrillic and Georgian text and currency signs, then it is kept as it is', () => {
    const text = 'Łukasz Żółć, Dvořák, Đorđe, ığdır – “Fenster” Größe 1.234,50 € ΩΣ Привет ქართული ₹ ₺ ₴ ¥ £';
    expect(drawable(text)).toBe(text);
  });

  it('given a letter and its combining mark, then they are composed', () => {
    expect(drawable('Zo\u0308e')).toBe('Zöe');
  });

  it('given characters the fonts have no glyph for, then each is drawn as ?', () => {
    expect(drawable('中文 ok ไทย')).toBe('?? ok ???');
  });

  it('given a right-to-left script, then its letters are drawn as ? rather than in reverse', () => {
    expect(drawable('Name: דוד / محمد')).toBe('Name: ??? / ????');
  });

  it('given line ends, tabs, control and format characters, then lines end in \\n, tabs are spaces and the rest is dropped', () => {
    expect(drawable('a\r\nb\rc\nd\te')).toBe('a\nb\nc\nd e');
    expect(drawable('Eve\u202Elive\u200B\uFEFF\u0000\u0007\u0085!')).toBe('Evelive!');
  });

  it('given any currency the product accepts, then its amounts in every document language are drawn whole', () => {
    const undrawable = CURRENCY_CODES.flatMap((currency) =>
      DOCUMENT_LOCALES.flatMap((locale) => [formatMoney(1234.5, currency, locale), formatUnitPrice(0.125, currency, locale)]),
    ).filter((amount) => drawable(amount) !== amount);
    expect(undrawable).toEqual([]);
  });
});
