import type { QuoteSent } from '../../domain/quote.events';
import type { QuotePdfContent } from '../quote-pdf';

/**
 * One sent quote as its two documents receive it: the content of its PDF and the `quote.v1.sent`
 * data its e-mail is composed from, agreeing on number, version, customer, locale, total and expiry.
 * By default Q-2026-000007 v2 for Ada Lovelace in EUR at 21 %, issued and sent on 1 March 2026, valid
 * until 31 March 2026, mailed to two recipients, with a product and HTML in its texts.
 */
export function sentQuote(overrides: Partial<QuotePdfContent> = {}): { content: QuotePdfContent; sent: QuoteSent['data'] } {
  const content: QuotePdfContent = {
    locale: 'en',
    unitSystem: 'metric',
    organization: { name: 'Fenster & Co' },
    customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    quoteNumber: 'Q-2026-000007',
    version: 2,
    reference: 'Kitchen <east>',
    notes: 'Delivery <b>before</b> May & "fitted"',
    currency: 'EUR',
    taxRate: 21,
    validityDays: 30,
    validUntil: Date.UTC(2026, 2, 31),
    issuedAt: Date.UTC(2026, 2, 1),
    product: { name: 'Tilt-turn window', width: 1200, height: 1400, unitAmount: 2 },
    lineItems: [
      { description: 'Frame <script>alert(1)</script>', quantity: 2, unitPrice: 450.5, total: 901 },
      { description: 'Triple glazing', quantity: 1, unitPrice: 333.5, total: 333.5 },
    ],
    subtotal: 1234.5,
    taxAmount: 259.25,
    total: 1493.75,
    ...overrides,
  };
  const sent: QuoteSent['data'] = {
    organizationId: 'org_1',
    quoteId: 'quo_1',
    quote: { id: 'quo_1', quoteNumber: content.quoteNumber, version: content.version, status: 'sent', total: content.total, currency: content.currency },
    customer: content.customer,
    submission: { id: 'sub_1' },
    recipients: ['ada@example.com', 'office@example.com'],
    locale: content.locale,
    sentAt: content.issuedAt,
    validUntil: content.validUntil,
    customerUrl: 'https://quotes.example.com/q/abc',
    tokenHash: 'h',
    resend: false,
    at: content.issuedAt,
  };
  return { content, sent };
}
