import { pdfPages, pdfText } from './testing/pdf-text';
import { sentQuote } from './testing/sent-quote';
import { renderQuotePdf, type QuotePdfContent } from './quote-pdf';

const content = (overrides: Partial<QuotePdfContent> = {}) => sentQuote(overrides).content;

describe('quote PDF', () => {
  it('given a quote version, then the PDF shows organization, customer, number, version, lines, totals, validity and notes', async () => {
    const pdf = await renderQuotePdf(content(), { compress: false });
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const text = pdfText(pdf);
    for (const expected of [
      'Fenster & Co', 'Quote', 'Q-2026-000007', 'Version', 'Ada Lovelace, ada@example.com', 'Kitchen <east>', 'Tilt-turn window',
      'Triple glazing', '€450.50', '€901.00', 'Subtotal', '€1,234.50', 'Tax (21%)', '€259.25', 'Total', '€1,493.75',
      'This quote is valid for 30 days, until March 31, 2026 at 12:00 AM UTC.', 'Notes',
    ]) expect(text).toContain(expected);
  });

  it("given the customer's company and address, then the PDF shows them, in the document's language", async () => {
    const customer = { name: 'Ada Lovelace', email: 'ada@example.com', companyName: 'Analytical Engines Ltd', address: '12 Baker Street, NW1 6XE London, United Kingdom' };
    const text = pdfText(await renderQuotePdf(content({ customer }), { compress: false }));
    for (const expected of ['Company', 'Analytical Engines Ltd', 'Address', '12 Baker Street, NW1 6XE London, United Kingdom']) expect(text).toContain(expected);
    const german = pdfText(await renderQuotePdf(content({ customer, locale: 'de' }), { compress: false }));
    for (const expected of ['Firma', 'Adresse']) expect(german).toContain(expected);
    // a content stored before they were kept (neither field) shows neither line
    expect(pdfText(await renderQuotePdf(content(), { compress: false }))).not.toMatch(/Company|Address/);
  });

  it('given HTML in the texts, then it is drawn as the characters it is made of', async () => {
    const text = pdfText(await renderQuotePdf(content(), { compress: false }));
    expect(text).toContain('Frame <script>alert(1)</script>');
    expect(text).toContain('Delivery <b>before</b> May & "fitted"');
  });

  it('given other scripts and currency signs, then the embedded fonts draw them; characters they lack and right-to-left letters are ?', async () => {
    const lineItems = [{ description: 'Łukasz Żółć – “Fenster” ΩΣ Привет 中文 דוד ok', quantity: 1, unitPrice: 10, total: 10 }];
    const customer = { name: 'Eve\r\nBcc: x\u202E', email: 'eve@example.com' };
    const pdf = await renderQuotePdf(content({ lineItems, customer, reference: 'Ref\r', currency: 'INR' }), { compress: false });
    const text = pdfText(pdf);
    expect(text).toContain('Łukasz Żółć – “Fenster” ΩΣ Привет ?? ??? ok');
    expect(text).toContain('Eve');
    expect(text).toContain('Bcc: x, eve@example.com');
    expect(text).not.toMatch(/[\r\u00d0\uFFFD]/);
    expect(text).toContain('₹10.00');
    expect(pdf.toString('latin1')).toMatch(/\/BaseFont \/[A-Z]{6}\+DejaVuSans\b/);
    expect(pdf.toString('latin1')).not.toContain('Helvetica');
  });

  it('given a PDF drew a letter made of another (Ż of Z), then the next PDF keeps that other letter in its text', async () => {
    await renderQuotePdf(content({ customer: { name: 'Żaneta', email: null } }));
    expect(pdfText(await renderQuotePdf(content({ customer: { name: 'Zoe', email: null } }), { compress: false }))).toContain('Zoe');
  });

  it.each([
    ['de', ['Angebot', 'Angebotsnummer', 'Zwischensumme', 'MwSt. (21 %)', 'Gesamtbetrag', '1.493,75 €', 'gültig, bis 31. März 2026 um 00:00 UTC.', 'Größe (B × H)', 'Anmerkungen']],
    ['nl', ['Offerte', 'Offertenummer', 'Subtotaal', 'Btw (21%)', 'Totaal', '€ 1.493,75', 'geldig, tot 31 maart 2026 om 00:00 UTC.', 'Afmeting (B × H)', 'Opmerkingen']],
  ] as const)('given locale %s, then labels, amounts and dates are in that language', async (locale, expected) => {
    const text = pdfText(await renderQuotePdf(content({ locale }), { compress: false }));
    for (const piece of expected) expect(text).toContain(piece);
    expect(text).not.toContain('Subtotal');
  });

  it.each([
    ['en', ['1.2345', '€0.125', '€0.15', 'Tax (7.6875%)']],
    ['de', ['1,2345', '0,125 €', '0,15 €', 'MwSt. (7,6875 %)']],
  ] as const)('given locale %s and a quantity, unit price and tax rate stored with more decimals than cents, then each is shown with all of them', async (locale, expected) => {
    const lineItems = [{ description: 'Sealant (m)', quantity: 1.2345, unitPrice: 0.125, total: 0.15 }];
    const text = pdfText(await renderQuotePdf(content({ locale, lineItems, taxRate: 7.6875, subtotal: 0.15, taxAmount: 0.01, total: 0.16 }), { compress: false }));
    for (const piece of expected) expect(text.split('\n')).toContain(piece);
  });

  it('given amounts of millions with their currency code, then each figure is drawn on one line, beside its label', async () => {
    const lineItems = [{ description: 'Lift-and-slide door', quantity: 999, unitPrice: 1234567.891, total: 1233333323.11 }];
    const text = pdfText(await renderQuotePdf(content({ currency: 'HUF', lineItems, subtotal: 1233333323.11, taxRate: 27, taxAmount: 333000000.24, total: 1566333323.35 }), { compress: false }));
    const lines = text.split('\n');
    for (const figure of ['HUF 1,234,567.891', 'HUF 1,233,333,323.11', 'HUF 333,000,000.24', 'HUF 1,566,333,323.35']) expect(lines).toContain(figure);
    expect(lines.slice(lines.indexOf('Total'), lines.indexOf('Total') + 2)).toEqual(['Total', 'HUF 1,566,333,323.35']);
  });

  it('given figures at the limits of the API, then the table\'s type is made smaller rather than a figure broken', async () => {
    const item = { description: 'Box', quantity: 999999.123457, unitPrice: 399999.123457, total: 399998772839.964 };
    const lineItems = [item, { ...item, description: 'Bag' }];
    const pdf = await renderQuotePdf(content({ currency: 'IQD', lineItems, subtotal: 799997545679.928, taxRate: 21, taxAmount: 167999484592.785, total: 967997030272.713 }), { compress: false });
    const lines = pdfText(pdf).split('\n');
    for (const figure of ['999,999.123457', 'IQD 399,999.123457', 'IQD 399,998,772,839.964', 'IQD 799,997,545,679.928', 'IQD 967,997,030,272.713']) expect(lines).toContain(figure);
    expect(pdf.toString('latin1')).toMatch(/\/F\d+ [6-9](\.\d+)? Tf/);
  });

  it('given a description taller than a page, then its figures stand beside its first line, and the next line comes after its last', async () => {
    const lineItems = [
      { description: 'First', quantity: 1, unitPrice: 1, total: 1 },
      { description: `Tall\n${'x\n'.repeat(150)}END`, quantity: 7, unitPrice: 3, total: 21 },
      { description: 'After', quantity: 2, unitPrice: 5, total: 10 },
    ];
    const pages = pdfPages(await renderQuotePdf(content({ lineItems, subtotal: 32, taxAmount: 6.72, total: 38.72 }), { compress: false })).map((page) => page.split('\n'));
    const tall = pages.findIndex((lines) => lines.includes('Tall'));
    expect(pages[tall]).toEqual(expect.arrayContaining(['7', '€3.00', '€21.00']));
    const end = pages.findIndex((lines) => lines.includes('END'));
    expect(end).toBeGreaterThan(tall);
    expect(pages.slice(tall + 1).flat()).not.toContain('€21.00');
    expect(pages[end].indexOf('After')).toBeGreaterThan(pages[end].indexOf('END'));
  });

  it('given a metric organization, then sizes are whole millimetres', async () => {
    expect(pdfText(await renderQuotePdf(content(), { compress: false }))).toContain('1200 × 1400 mm');
  });

  it('given an imperial organization, then sizes are inches with one decimal in the locale', async () => {
    expect(pdfText(await renderQuotePdf(content({ unitSystem: 'imperial' }), { compress: false }))).toContain('47.2 × 55.1 in');
    expect(pdfText(await renderQuotePdf(content({ unitSystem: 'imperial', locale: 'de' }), { compress: false }))).toContain('47,2 × 55,1 in');
  });

  it('given no reference, notes or product, then those rows are left out', async () => {
    const text = pdfText(await renderQuotePdf(content({ reference: null, notes: null, product: null }), { compress: false }));
    expect(text).not.toContain('Reference');
    expect(text).not.toContain('Notes');
    expect(text).not.toContain('Size');
    expect(text).toContain('Total');
  });

  it('given many line items, then they continue on further pages', async () => {
    const lineItems = Array.from({ length: 80 }, (_, i) => ({ description: `Item ${i + 1}`, quantity: 1, unitPrice: 1, total: 1 }));
    const pdf = await renderQuotePdf(content({ lineItems }), { compress: false });
    expect(pdf.toString('latin1').match(/\/Type \/Page\b/g)!.length).toBeGreaterThan(1);
    expect(pdfText(pdf)).toContain('Item 80');
  });

  it('given 30 to 40 line items, then subtotal, tax and total are drawn together on one page, each amount beside its label', async () => {
    for (let count = 30; count <= 40; count++) {
      const lineItems = Array.from({ length: count }, (_, i) => ({ description: `Item ${i + 1}`, quantity: 1, unitPrice: 10, total: 10 }));
      const pages = pdfPages(await renderQuotePdf(content({ lineItems, subtotal: count * 10, taxAmount: count * 2.1, total: count * 12.1 }), { compress: false }));
      const block = ['Subtotal', `€${count * 10}.00`, 'Tax (21%)', `€${(count * 2.1).toFixed(2)}`, 'Total', `€${(count * 12.1).toFixed(2)}`];
      const page = pages.map((text) => text.split('\n')).find((lines) => lines.includes('Subtotal')) ?? [];
      expect({ count, block: page.slice(page.indexOf('Subtotal'), page.indexOf('Subtotal') + block.length) }).toEqual({ count, block });
    }
  });
});

describe('quote PDF, compressed as served', () => {
  it('given the default compression, then the same text is drawn', async () => {
    const compressed = await renderQuotePdf(content());
    const plain = await renderQuotePdf(content(), { compress: false });
    expect(compressed.length).toBeLessThan(plain.length);
    expect(pdfText(compressed)).toBe(pdfText(plain));
  });
});
