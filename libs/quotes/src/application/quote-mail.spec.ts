import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@lib/shared';
import type { QuoteSent } from '../domain/quote.events';
import { FileQuoteMailer } from './quote-mailer';
import { composeQuoteMail } from './quote-sent-mail.reactor';

const sent = (locale: string): QuoteSent['data'] => ({
  organizationId: 'org_1',
  quoteId: 'quo_1',
  quote: { id: 'quo_1', quoteNumber: 'Q-2026-000007', version: 2, status: 'sent', total: 1234.5, currency: 'EUR' },
  customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
  submission: { id: 'sub_1' },
  recipients: ['ada@example.com', 'office@example.com'],
  locale,
  sentAt: Date.UTC(2026, 2, 1),
  validUntil: Date.UTC(2026, 2, 31),
  customerUrl: 'https://quotes.example.com/q/abc',
  tokenHash: 'h',
  resend: false,
  at: Date.UTC(2026, 2, 1),
});

describe('quote e-mail', () => {
  it.each([
    ['en', 'Your quote Q-2026-000007 from Fenster GmbH', '€1,234.50', 'March 31, 2026'],
    ['de', 'Ihr Angebot Q-2026-000007 von Fenster GmbH', '1.234,50 €', '31. März 2026'],
    ['nl', 'Uw offerte Q-2026-000007 van Fenster GmbH', '€ 1.234,50', '31 maart 2026'],
  ])('given locale %s, then subject, amount and date are in that language', (locale, subject, total, date) => {
    const mail = composeQuoteMail('ev-1', sent(locale), 'Fenster GmbH');
    expect(mail).toMatchObject({ id: 'ev-1', to: ['ada@example.com', 'office@example.com'], locale, subject, quoteUrl: 'https://quotes.example.com/q/abc', quoteNumber: 'Q-2026-000007' });
    // Intl separates with non-breaking spaces
    const text = mail.text.replace(/[\u00a0\u202f]/g, ' ');
    expect(text).toContain(total);
    expect(text).toContain(date);
    expect(mail.text).toContain('https://quotes.example.com/q/abc');
  });

  it('given an unsupported locale, then the mail is in English', () => {
    expect(composeQuoteMail('ev-1', sent('fr'), 'Fenster GmbH').locale).toBe('en');
  });

  it('given the same event twice, then the file mailer writes one mail', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quote-mail-'));
    try {
      const mailer = new FileQuoteMailer(loadConfig({ DATA_DIR: dataDir }));
      const mail = composeQuoteMail('ev-1', sent('en'), 'Fenster GmbH');
      await mailer.send(mail);
      await mailer.send({ ...mail, subject: 'changed' });
      expect(readdirSync(join(dataDir, 'mail'))).toEqual(['ev-1.json']);
      expect(JSON.parse(readFileSync(join(dataDir, 'mail', 'ev-1.json'), 'utf8'))).toEqual(mail);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
