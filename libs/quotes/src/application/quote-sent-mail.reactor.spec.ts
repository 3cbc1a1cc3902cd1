import { computeTotals, lineTotal, toMoneyNumber } from '@lib/shared';
import type { DocumentLocale } from '../documents/document-locale';
import { renderQuotePdf } from '../documents/quote-pdf';
import { pdfText } from '../documents/testing/pdf-text';
import { sentQuote } from '../documents/testing/sent-quote';
import { composeQuoteMail } from './quote-sent-mail.reactor';

interface Sent {
  locale: DocumentLocale;
  currency: string;
  lines: Array<{ quantity: number; unitPrice: number }>;
  taxRate: number;
  validUntil?: number;
}

/** One sent quote as the PDF and the e-mail each receive it, its totals computed as the API computes them. */
async function documents({ lines, ...terms }: Sent) {
  const { subtotal, taxAmount, total } = computeTotals(lines, terms.taxRate, terms.currency);
  const lineItems = lines.map((line, i) => ({ description: `Item ${i + 1}`, ...line, total: toMoneyNumber(lineTotal(line.quantity, line.unitPrice, terms.currency)) }));
  const { content, sent } = sentQuote({ organization: { name: 'Fenster GmbH' }, reference: null, notes: null, product: null, ...terms, lineItems, subtotal, taxAmount, total });
  const pdf = await renderQuotePdf(content, { compress: false });
  const mail = composeQuoteMail('ev-1', sent, sent.customerUrl!, content.organization.name);
  return { pdf: pdfText(pdf).split('\n'), mail };
}

describe('quote PDF and e-mail, amounts', () => {
  it.each([
    {
      case: 'HUF in de (Intl would show no decimals)',
      sent: { locale: 'de', currency: 'HUF', lines: [{ quantity: 1, unitPrice: 1000.4 }, { quantity: 1, unitPrice: 1000.4 }, { quantity: 1, unitPrice: 12.35 }], taxRate: 27 },
      lines: ['1.000,40 HUF', '12,35 HUF'],
      totals: ['Zwischensumme', '2.013,15 HUF', 'MwSt. (27 %)', '543,55 HUF', 'Gesamtbetrag', '2.556,70 HUF'],
      mail: 'über insgesamt 2.556,70 HUF gesendet',
    },
    {
      case: 'IQD in en (three decimals)',
      sent: { locale: 'en', currency: 'IQD', lines: [{ quantity: 1, unitPrice: 1250.125 }, { quantity: 2, unitPrice: 5.25 }], taxRate: 5 },
      lines: ['IQD 1,250.125', 'IQD 5.250', 'IQD 10.500'],
      totals: ['Subtotal', 'IQD 1,260.625', 'Tax (5%)', 'IQD 63.031', 'Total', 'IQD 1,323.656'],
      mail: 'for a total of IQD 1,323.656.',
    },
    {
      case: 'JPY in en (no decimals, a unit price with some)',
      sent: { locale: 'en', currency: 'JPY', lines: [{ quantity: 3, unitPrice: 12.5 }, { quantity: 2, unitPrice: 1500 }], taxRate: 10 },
      lines: ['¥12.5', '¥38', '¥1,500', '¥3,000'],
      totals: ['Subtotal', '¥3,038', 'Tax (10%)', '¥304', 'Total', '¥3,342'],
      mail: 'for a total of ¥3,342.',
    },
    {
      case: 'EUR in nl',
      sent: { locale: 'nl', currency: 'EUR', lines: [{ quantity: 8, unitPrice: 0.125 }, { quantity: 1, unitPrice: 1200 }], taxRate: 21 },
      lines: ['€ 0,125', '€ 1,00', '€ 1.200,00'],
      totals: ['Subtotaal', '€ 1.201,00', 'Btw (21%)', '€ 252,21', 'Totaal', '€ 1.453,21'],
      mail: 'voor een totaal van € 1.453,21.',
    },
  ] as Array<{ case: string; sent: Sent; lines: string[]; totals: string[]; mail: string }>)(
    'given $case, then every amount has the minor unit of the currency and the printed lines add up, in the PDF and the e-mail',
    async ({ sent, lines, totals, mail: inMail }) => {
      const { pdf, mail } = await documents(sent);
      for (const line of lines) expect(pdf).toContain(line);
      const at = pdf.indexOf(totals[0]);
      expect(pdf.slice(at, at + totals.length)).toEqual(totals);
      expect(mail.text).toContain(inMail);
    },
  );
});

describe('quote PDF and e-mail, expiry', () => {
  const validUntil = Date.UTC(2026, 2, 24, 14, 37, 22);

  it.each([
    ['en', 'This quote is valid for 30 days, until March 24, 2026 at 2:37 PM UTC.', 'It is valid until March 24, 2026 at 2:37 PM UTC.'],
    ['de', 'Dieses Angebot ist 30 Tage gültig, bis 24. März 2026 um 14:37 UTC.', 'Es ist gültig bis 24. März 2026 um 14:37 UTC.'],
    ['nl', 'Deze offerte is 30 dagen geldig, tot 24 maart 2026 om 14:37 UTC.', 'De offerte is geldig tot 24 maart 2026 om 14:37 UTC.'],
  ] as const)('given locale %s, then the PDF and the e-mail give the same expiry instant, date and time in UTC, worded "until"', async (locale, inPdf, inMail) => {
    const { pdf, mail } = await documents({ locale, currency: 'EUR', lines: [{ quantity: 1, unitPrice: 100 }], taxRate: 21, validUntil });
    expect(pdf).toContain(inPdf);
    expect(mail.text).toContain(inMail);
    expect(mail.html).toContain(inMail);
  });
});
