import PDFDocument from 'pdfkit';
import { formatDate, formatMoney, formatNumber, formatSize, type DocumentLocale, type UnitSystem } from './document-locale';

/** Everything one quote PDF shows: the content of one quote version and who it is from and for. */
export interface QuotePdfContent {
  locale: DocumentLocale;
  unitSystem: UnitSystem;
  organization: { name: string };
  customer: { name: string | null; email: string | null };
  quoteNumber: string;
  version: number;
  reference: string | null;
  notes: string | null;
  currency: string;
  taxRate: number;
  validityDays: number;
  validUntil: number;
  /** when this version's content was last changed (its date on the document) */
  issuedAt: number;
  /** the configured product of the submission, when it is known */
  product: { name: string; width: number; height: number; unitAmount: number } | null;
  lineItems: Array<{ description: string; quantity: number; unitPrice: number; total: number }>;
  subtotal: number;
  taxAmount: number;
  total: number;
}

interface Labels {
  title: string;
  quoteNumber: string;
  version: string;
  date: string;
  reference: string;
  customer: string;
  product: string;
  size: string;
  units: string;
  description: string;
  quantity: string;
  unitPrice: string;
  amount: string;
  subtotal: string;
  tax: (rate: string) => string;
  total: string;
  validity: (days: number, until: string) => string;
  notes: string;
}

const LABELS: Record<DocumentLocale, Labels> = {
  en: {
    title: 'Quote',
    quoteNumber: 'Quote number',
    version: 'Version',
    date: 'Date',
    reference: 'Reference',
    customer: 'Customer',
    product: 'Product',
    size: 'Size (W × H)',
    units: 'Units',
    description: 'Description',
    quantity: 'Qty',
    unitPrice: 'Unit price',
    amount: 'Amount',
    subtotal: 'Subtotal',
    tax: (rate) => `Tax (${rate}%)`,
    total: 'Total',
    validity: (days, until) => `This quote is valid for ${days} days, until ${until}.`,
    notes: 'Notes',
  },
  de: {
    title: 'Angebot',
    quoteNumber: 'Angebotsnummer',
    version: 'Version',
    date: 'Datum',
    reference: 'Referenz',
    customer: 'Kunde',
    product: 'Produkt',
    size: 'Größe (B × H)',
    units: 'Stückzahl',
    description: 'Beschreibung',
    quantity: 'Menge',
    unitPrice: 'Einzelpreis',
    amount: 'Betrag',
    subtotal: 'Zwischensumme',
    tax: (rate) => `MwSt. (${rate} %)`,
    total: 'Gesamtbetrag',
    validity: (days, until) => `Dieses Angebot ist ${days} Tage gültig, bis zum ${until}.`,
    notes: 'Anmerkungen',
  },
  nl: {
    title: 'Offerte',
    quoteNumber: 'Offertenummer',
    version: 'Versie',
    date: 'Datum',
    reference: 'Referentie',
    customer: 'Klant',
    product: 'Product',
    size: 'Afmeting (B × H)',
    units: 'Aantal stuks',
    description: 'Omschrijving',
    quantity: 'Aantal',
    unitPrice: 'Stukprijs',
    amount: 'Bedrag',
    subtotal: 'Subtotaal',
    tax: (rate) => `Btw (${rate}%)`,
    total: 'Totaal',
    validity: (days, until) => `Deze offerte is ${days} dagen geldig, tot en met ${until}.`,
    notes: 'Opmerkingen',
  },
};

const MARGIN = 50;
const WIDTH = 595.28 - 2 * MARGIN; // A4
const COLUMNS = { description: 0, quantity: 265, unitPrice: 320, amount: 410 };
const AMOUNT_WIDTH = WIDTH - COLUMNS.amount;

/**
 * Renders a quote version as an A4 PDF. Every text is drawn as literal text (pdfkit has no markup),
 * so HTML in a description or the notes shows as the characters it is made of. The standard
 * Helvetica font covers the Latin-1 / Windows-1252 characters of en, de and nl; see
 * docs/decisions/quote-pdfs-and-email.md for other scripts. `compress: false` keeps the content
 * streams readable (tests extract the text).
 */
export function renderQuotePdf(content: QuotePdfContent, options: { compress?: boolean } = {}): Promise<Buffer> {
  const { locale } = content;
  const t = LABELS[locale];
  const money = (amount: number) => formatMoney(amount, content.currency, locale);
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    compress: options.compress ?? true,
    lang: locale,
    info: {
      Title: `${t.title} ${content.quoteNumber} (${t.version} ${content.version})`,
      Author: content.organization.name,
      CreationDate: new Date(content.issuedAt),
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  doc.font('Helvetica-Bold').fontSize(16).text(content.organization.name, { width: WIDTH });
  doc.moveDown(0.5).fontSize(22).text(t.title);
  doc.moveDown(0.5).font('Helvetica').fontSize(10);
  const facts: Array<[string, string]> = [
    [t.quoteNumber, content.quoteNumber],
    [t.version, String(content.version)],
    [t.date, formatDate(content.issuedAt, locale)],
  ];
  if (content.reference) facts.push([t.reference, content.reference]);
  const customer = [content.customer.name, content.customer.email].filter(Boolean).join(', ');
  if (customer) facts.push([t.customer, customer]);
  if (content.product) {
    facts.push([t.product, content.product.name]);
    facts.push([t.size, formatSize(content.product.width, content.product.height, content.unitSystem, locale)]);
    facts.push([t.units, formatNumber(content.product.unitAmount, locale)]);
  }
  for (const [label, value] of facts) row(doc, label, value);

  doc.moveDown(1);
  let y = doc.y;
  doc.font('Helvetica-Bold');
  doc.text(t.description, MARGIN + COLUMNS.description, y, { width: COLUMNS.quantity - 10 });
  doc.text(t.quantity, MARGIN + COLUMNS.quantity, y, { width: COLUMNS.unitPrice - COLUMNS.quantity - 10, align: 'right' });
  doc.text(t.unitPrice, MARGIN + COLUMNS.unitPrice, y, { width: COLUMNS.amount - COLUMNS.unitPrice - 10, align: 'right' });
  doc.text(t.amount, MARGIN + COLUMNS.amount, y, { width: AMOUNT_WIDTH, align: 'right' });
  doc.font('Helvetica');
  y = doc.y + 4;
  for (const item of content.lineItems) {
    const height = doc.heightOfString(item.description, { width: COLUMNS.quantity - 10 });
    if (y + height > doc.page.height - MARGIN) {
      doc.addPage();
      y = MARGIN;
    }
    doc.text(item.description, MARGIN + COLUMNS.description, y, { width: COLUMNS.quantity - 10 });
    doc.text(formatNumber(item.quantity, locale), MARGIN + COLUMNS.quantity, y, { width: COLUMNS.unitPrice - COLUMNS.quantity - 10, align: 'right' });
    doc.text(money(item.unitPrice), MARGIN + COLUMNS.unitPrice, y, { width: COLUMNS.amount - COLUMNS.unitPrice - 10, align: 'right' });
    doc.text(money(item.total), MARGIN + COLUMNS.amount, y, { width: AMOUNT_WIDTH, align: 'right' });
    y += height + 4;
  }

  doc.x = MARGIN;
  doc.y = y + 8;
  total(doc, t.subtotal, money(content.subtotal), false);
  total(doc, t.tax(formatNumber(content.taxRate, locale)), money(content.taxAmount), false);
  total(doc, t.total, money(content.total), true);

  doc.moveDown(1).font('Helvetica').text(t.validity(content.validityDays, formatDate(content.validUntil, locale)), MARGIN, doc.y, { width: WIDTH });
  if (content.notes) {
    doc.moveDown(1).font('Helvetica-Bold').text(t.notes, { width: WIDTH });
    doc.font('Helvetica').text(content.notes, { width: WIDTH });
  }
  doc.end();
  return done;
}

function row(doc: PDFKit.PDFDocument, label: string, value: string): void {
  const y = doc.y;
  doc.font('Helvetica-Bold').text(label, MARGIN, y, { width: 140 });
  const labelBottom = doc.y;
  doc.font('Helvetica').text(value, MARGIN + 150, y, { width: WIDTH - 150 });
  doc.y = Math.max(doc.y, labelBottom);
}

function total(doc: PDFKit.PDFDocument, label: string, value: string, bold: boolean): void {
  const y = doc.y;
  doc.font(bold ? 'Helvetica-Bold' : 'Helvetica');
  doc.text(label, MARGIN + COLUMNS.unitPrice - 100, y, { width: COLUMNS.amount - COLUMNS.unitPrice + 90, align: 'right' });
  doc.text(value, MARGIN + COLUMNS.amount, y, { width: AMOUNT_WIDTH, align: 'right' });
  doc.x = MARGIN;
}
