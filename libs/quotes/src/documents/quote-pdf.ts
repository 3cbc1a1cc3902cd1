import PDFDocument from 'pdfkit';
import { formatDate, formatMoney, formatQuantity, formatSize, formatTaxRate, formatUnitPrice, formatValidUntil, type DocumentLocale, type UnitSystem } from './document-locale';
import { drawable } from './drawable-text';
import { BOLD, REGULAR, registerFonts } from './pdf-fonts';

/** Everything one quote PDF shows: the content of one quote version and who it is from and for. */
export interface QuotePdfContent {
  locale: DocumentLocale;
  unitSystem: UnitSystem;
  organization: { name: string };
  /**
   * Who the quote is for: the submission's customer. `companyName` and `address` (one line: street,
   * postal code and city, country) were added on 2026-11-27; contents stored before have neither.
   */
  customer: { name: string | null; email: string | null; companyName?: string | null; address?: string | null };
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
  company: string;
  address: string;
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
    company: 'Company',
    address: 'Address',
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
    company: 'Firma',
    address: 'Adresse',
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
    company: 'Bedrijf',
    address: 'Adres',
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
const GAP = 10;

/** Where a column of the line-item table starts (from the left margin), and its width. */
interface Column {
  x: number;
  width: number;
}

interface Columns {
  /** the type size of the table: TABLE_FONT_SIZE, or less where the figures need it */
  fontSize: number;
  description: Column;
  quantity: Column;
  unitPrice: Column;
  amount: Column;
  /** the labels of subtotal, tax and total: right-aligned, ending before the amounts */
  totalLabel: Column;
}

/** The narrowest each figure column is, and the description at least once figures need room. */
const LEAST = { quantity: 45, unitPrice: 80, amount: 85, description: 150, totalLabel: 180 };

/** The table's type size, and the least it is made to fit the widest figures in one line each. */
const TABLE_FONT_SIZE = 10;
const LEAST_TABLE_FONT_SIZE = 6;

/**
 * The table's columns for this document: the figure columns as wide as their widest figure (or
 * header), at least LEAST, and the description what is left. An amount of a million with its
 * currency's code (`HUF 2,427,949.62`) wrapped in the fixed 85 pt column, the code above the
 * number (found by a review). When the figures need more than the description leaves them, the
 * table's type is made smaller (down to 6 pt) rather than a figure broken: narrowed columns broke
 * `999,999.123457` and a total in the middle (found by the review of that fix). Only past that
 * does a figure wrap; the API's limits keep every figure within it.
 */
const FIGURE_COLUMNS = ['quantity', 'unitPrice', 'amount'] as const;

function tableColumns(doc: PDFKit.PDFDocument, figures: Record<(typeof FIGURE_COLUMNS)[number], string[]>): Columns {
  doc.font(BOLD).fontSize(TABLE_FONT_SIZE); // the header and the total are bold: the widest form of every figure
  const measured = FIGURE_COLUMNS.map((name) => Math.max(...figures[name].map((text) => doc.widthOfString(text))));
  const room = WIDTH - LEAST.description - 3 * GAP;
  const needed = measured.reduce((sum, width) => sum + width + 1, 0);
  const fontSize = needed > room ? Math.max(LEAST_TABLE_FONT_SIZE, Math.floor((TABLE_FONT_SIZE * room * 10) / needed) / 10) : TABLE_FONT_SIZE;
  const scale = fontSize / TABLE_FONT_SIZE;
  const [quantity, unitPrice, amount] = FIGURE_COLUMNS.map((name, i) => Math.max(LEAST[name] * scale, Math.ceil(measured[i] * scale) + 1));
  doc.font(REGULAR);
  const amountX = WIDTH - amount;
  const unitPriceX = amountX - GAP - unitPrice;
  const quantityX = unitPriceX - GAP - quantity;
  const labelEnd = amountX - GAP;
  return {
    fontSize,
    description: { x: 0, width: quantityX - GAP },
    quantity: { x: quantityX, width: quantity },
    unitPrice: { x: unitPriceX, width: unitPrice },
    amount: { x: amountX, width: amount },
    totalLabel: { x: Math.max(0, labelEnd - LEAST.totalLabel), width: Math.min(labelEnd, LEAST.totalLabel) },
  };
}

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
  if (content.customer.companyName) facts.push([t.company, content.customer.companyName]);
  if (content.customer.address) facts.push([t.address, content.customer.address]);
  if (content.product) {
    facts.push([t.product, content.product.name]);
    facts.push([t.size, formatSize(content.product.width, content.product.height, content.unitSystem, locale)]);
    facts.push([t.units, formatQuantity(content.product.unitAmount, locale)]);
  }
  for (const [label, value] of facts) row(doc, label, value);

  const rows = content.lineItems.map((item) => ({
    description: item.description,
    quantity: formatQuantity(item.quantity, locale),
    unitPrice: formatUnitPrice(item.unitPrice, content.currency, locale),
    amount: money(item.total),
  }));
  const sums: TotalRow[] = [
    { label: t.subtotal, value: money(content.subtotal), bold: false },
    { label: t.tax(formatTaxRate(content.taxRate, locale)), value: money(content.taxAmount), bold: false },
    { label: t.total, value: money(content.total), bold: true },
  ];
  const columns = tableColumns(doc, {
    quantity: [t.quantity, ...rows.map((row) => row.quantity)],
    unitPrice: [t.unitPrice, ...rows.map((row) => row.unitPrice)],
    amount: [t.amount, ...rows.map((row) => row.amount), ...sums.map((sum) => sum.value)],
  });
  const cell = (text: string, column: Column, y: number, align: 'left' | 'right') => doc.text(text, MARGIN + column.x, y, { width: column.width, align });

  doc.moveDown(1).fontSize(columns.fontSize);
  let y = doc.y;
  doc.font(BOLD);
  cell(t.description, columns.description, y, 'left');
  cell(t.quantity, columns.quantity, y, 'right');
  cell(t.unitPrice, columns.unitPrice, y, 'right');
  cell(t.amount, columns.amount, y, 'right');
  doc.font(REGULAR);
  y = doc.y + 4;
  for (const row of rows) {
    // The figures first, then the description: a description taller than a page goes on over the
    // next pages, and its figures stay beside its first line (drawn after it, they were drawn on
    // its last page, beside another part of it; found by a review).
    const cells: Array<[string, Column, 'left' | 'right']> = [
      [row.quantity, columns.quantity, 'right'],
      [row.unitPrice, columns.unitPrice, 'right'],
      [row.amount, columns.amount, 'right'],
      [row.description, columns.description, 'left'],
    ];
    const height = Math.max(...cells.map(([text, column]) => doc.heightOfString(text, { width: column.width })));
    if (y + height > doc.page.height - MARGIN) {
      doc.addPage();
      y = MARGIN;
    }
    const page = doc.page;
    for (const [text, column, align] of cells) cell(text, column, y, align);
    y = doc.page === page ? y + height + 4 : doc.y + 4;
  }

  doc.x = MARGIN;
  doc.y = y + 8;
  totals(doc, sums, columns);
  doc.fontSize(TABLE_FONT_SIZE);

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
    customer: {
      name: optional(content.customer.name),
      email: optional(content.customer.email),
      companyName: optional(content.customer.companyName ?? null),
      address: optional(content.customer.address ?? null),
    },
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

/**
 * Subtotal, tax and total as one block, on a new page when the whole block does not fit above the
 * bottom margin. Each label and amount is drawn at an explicit y, and pdfkit moves any text below
 * the margin to a page of its own, which parted a total from its label.
 */
function totals(doc: PDFKit.PDFDocument, rows: TotalRow[], columns: Columns): void {
  const height = rows.reduce((sum, row) => sum + totalHeight(doc, row, columns), 0);
  if (doc.y + height > doc.page.height - MARGIN) doc.addPage();
  for (const row of rows) total(doc, row, columns);
}

function totalHeight(doc: PDFKit.PDFDocument, { label, value, bold }: TotalRow, columns: Columns): number {
  doc.font(bold ? BOLD : REGULAR);
  return Math.max(doc.heightOfString(label, { width: columns.totalLabel.width }), doc.heightOfString(value, { width: columns.amount.width }));
}

function total(doc: PDFKit.PDFDocument, { label, value, bold }: TotalRow, columns: Columns): void {
  const y = doc.y;
  doc.font(bold ? BOLD : REGULAR);
  doc.text(label, MARGIN + columns.totalLabel.x, y, { width: columns.totalLabel.width, align: 'right' });
  const labelBottom = doc.y;
  doc.text(value, MARGIN + columns.amount.x, y, { width: columns.amount.width, align: 'right' });
  doc.y = Math.max(doc.y, labelBottom);
  doc.x = MARGIN;
}
