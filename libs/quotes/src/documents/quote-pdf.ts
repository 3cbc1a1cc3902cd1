import PDFDocument from 'pdfkit';
import { formatDate, formatMoney, formatQuantity, formatSize, formatTaxRate, formatUnitPrice, formatValidUntil, type DocumentLocale, type UnitSystem } from './document-locale';
import { drawable } from './drawable-text';
import { BOLD, REGULAR, registerFonts } from './pdf-fonts';

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
  /** `until` is the worded expiry, `formatValidUntil` */
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
    validity: (days, until) => `This quote is valid for ${days} days, ${until}.`,
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
    validity: (days, until) => `Dieses Angebot ist ${days} Tage gültig, ${until}.`,
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
    validity: (days, until) => `Deze offerte is ${days} dagen geldig, ${until}.`,
    notes: 'Opmerkingen',
  },
};

const MARGIN = 50;
const WIDTH = 595.28 - 2 * MARGIN; // A4
const COLUMNS = { description: 0, quantity: 265, unitPrice: 320, amount: 410 };
const AMOUNT_WIDTH = WIDTH - COLUMNS.amount;

/**
 * Renders a quote version as an A4 PDF. Every text is drawn as literal text (pdfkit has no markup),
 * so HTML in a description or the notes shows as the characters it is made of. The embedded fonts
 * (pdf-fonts.ts) draw what `drawable` leaves; see docs/decisions/quote-pdfs-and-email.md.
 * `compress: false` keeps the content streams readable (tests extract the text).
 */
export function renderQuotePdf(given: QuotePdfContent, options: { compress?: boolean } = {}): Promise<Buffer> {
  const content = drawableContent(given);
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
      Author: given.organization.name,
      CreationDate: new Date(content.issuedAt),
    },
  });
  registerFonts(doc);
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  doc.font(BOLD).fontSize(16).text(content.organization.name, { width: WIDTH });
  doc.moveDown(0.5).fontSize(22).text(t.title);
  doc.moveDown(0.5).font(REGULAR).fontSize(10);
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
    facts.push([t.units, formatQuantity(content.product.unitAmount, locale)]);
  }
  for (const [label, value] of facts) row(doc, label, value);

  doc.moveDown(1);
  let y = doc.y;
  doc.font(BOLD);
  doc.text(t.description, MARGIN + COLUMNS.description, y, { width: COLUMNS.quantity - 10 });
  doc.text(t.quantity, MARGIN + COLUMNS.quantity, y, { width: COLUMNS.unitPrice - COLUMNS.quantity - 10, align: 'right' });
  doc.text(t.unitPrice, MARGIN + COLUMNS.unitPrice, y, { width: COLUMNS.amount - COLUMNS.unitPrice - 10, align: 'right' });
  doc.text(t.amount, MARGIN + COLUMNS.amount, y, { width: AMOUNT_WIDTH, align: 'right' });
  doc.font(REGULAR);
  y = doc.y + 4;
  for (const item of content.lineItems) {
    const cells: Array<[string, number, number, 'left' | 'right']> = [
      [item.description, COLUMNS.description, COLUMNS.quantity - 10, 'left'],
      [formatQuantity(item.quantity, locale), COLUMNS.quantity, COLUMNS.unitPrice - COLUMNS.quantity - 10, 'right'],
      [formatUnitPrice(item.unitPrice, content.currency, locale), COLUMNS.unitPrice, COLUMNS.amount - COLUMNS.unitPrice - 10, 'right'],
      [money(item.total), COLUMNS.amount, AMOUNT_WIDTH, 'right'],
    ];
    // A unit price with all six decimals may wrap in its narrow column, like a long description.
    const height = Math.max(...cells.map(([text, , width]) => doc.heightOfString(text, { width })));
    if (y + height > doc.page.height - MARGIN) {
      doc.addPage();
      y = MARGIN;
    }
    for (const [text, x, width, align] of cells) doc.text(text, MARGIN + x, y, { width, align });
    y += height + 4;
  }

  doc.x = MARGIN;
  doc.y = y + 8;
  totals(doc, [
    { label: t.subtotal, value: money(content.subtotal), bold: false },
    { label: t.tax(formatTaxRate(content.taxRate, locale)), value: money(content.taxAmount), bold: false },
    { label: t.total, value: money(content.total), bold: true },
  ]);

  doc.moveDown(1).font(REGULAR).text(t.validity(content.validityDays, formatValidUntil(content.validUntil, locale)), MARGIN, doc.y, { width: WIDTH });
  if (content.notes) {
    doc.moveDown(1).font(BOLD).text(t.notes, { width: WIDTH });
    doc.font(REGULAR).text(content.notes, { width: WIDTH });
  }
  doc.end();
  return done;
}

/** The content with every text as the fonts can draw it (drawable-text.ts); the document's info keeps the originals. */
function drawableContent(content: QuotePdfContent): QuotePdfContent {
  const optional = (text: string | null) => (text === null ? null : drawable(text));
  return {
    ...content,
    organization: { name: drawable(content.organization.name) },
    customer: { name: optional(content.customer.name), email: optional(content.customer.email) },
    reference: optional(content.reference),
    notes: optional(content.notes),
    product: content.product && { ...content.product, name: drawable(content.product.name) },
    lineItems: content.lineItems.map((item) => ({ ...item, description: drawable(item.description) })),
  };
}

function row(doc: PDFKit.PDFDocument, label: string, value: string): void {
  const y = doc.y;
  doc.font(BOLD).text(label, MARGIN, y, { width: 140 });
  const labelBottom = doc.y;
  doc.font(REGULAR).text(value, MARGIN + 150, y, { width: WIDTH - 150 });
  doc.y = Math.max(doc.y, labelBottom);
}

interface TotalRow {
  label: string;
  value: string;
  bold: boolean;
}

const TOTAL_LABEL_X = MARGIN + COLUMNS.unitPrice - 100;
const TOTAL_LABEL_WIDTH = COLUMNS.amount - COLUMNS.unitPrice + 90;

/**
 * Subtotal, tax and total as one block, on a new page when the whole block does not fit above the
 * bottom margin. Each label and amount is drawn at an explicit y, and pdfkit moves any text below
 * the margin to a page of its own, which parted a total from its label.
 */
function totals(doc: PDFKit.PDFDocument, rows: TotalRow[]): void {
  const height = rows.reduce((sum, row) => sum + totalHeight(doc, row), 0);
  if (doc.y + height > doc.page.height - MARGIN) doc.addPage();
  for (const row of rows) total(doc, row);
}

function totalHeight(doc: PDFKit.PDFDocument, { label, value, bold }: TotalRow): number {
  doc.font(bold ? BOLD : REGULAR);
  return Math.max(doc.heightOfString(label, { width: TOTAL_LABEL_WIDTH }), doc.heightOfString(value, { width: AMOUNT_WIDTH }));
}

function total(doc: PDFKit.PDFDocument, { label, value, bold }: TotalRow): void {
  const y = doc.y;
  doc.font(bold ? BOLD : REGULAR);
  doc.text(label, TOTAL_LABEL_X, y, { width: TOTAL_LABEL_WIDTH, align: 'right' });
  const labelBottom = doc.y;
  doc.text(value, MARGIN + COLUMNS.amount, y, { width: AMOUNT_WIDTH, align: 'right' });
  doc.y = Math.max(doc.y, labelBottom);
  doc.x = MARGIN;
}
