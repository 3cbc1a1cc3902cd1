import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@lib/shared';
import { sentQuote } from '../documents/testing/sent-quote';
import type { QuoteSent } from '../domain/quote.events';
import { FileQuoteMailer } from './quote-mailer';
import { composeQuoteMail, QUOTE_LINK_SLOT, withQuoteLink } from './quote-sent-mail.reactor';

/** The sent quote's data with the customer's locale as sent, supported or not. */
const sent = (locale: string): QuoteSent['data'] => ({ ...sentQuote().sent, locale });

describe('quote e-mail', () => {
  it.each([
    ['en', 'Your quote Q-2026-000007 from Fenster GmbH', '€1,493.75', 'March 31, 2026'],
    ['de', 'Ihr Angebot Q-2026-000007 von Fenster GmbH', '1.493,75 €', '31. März 2026'],
    ['nl', 'Uw offerte Q-2026-000007 van Fenster GmbH', '€ 1.493,75', '31 maart 2026'],
  ])('given locale %s, then subject, amount and date are in that language', (locale, subject, total, date) => {
    const mail = composeQuoteMail('ev-1', sent(locale), sent(locale).customerUrl!, 'Fenster GmbH');
    expect(mail).toMatchObject({ id: 'ev-1', to: ['ada@example.com', 'office@example.com'], locale, subject, quoteUrl: 'https://quotes.example.com/q/abc', quoteNumber: 'Q-2026-000007' });
    // Intl separates with non-breaking spaces
    const text = mail.text.replace(/[\u00a0\u202f]/g, ' ');
    expect(text).toContain(total);
    expect(text).toContain(date);
    expect(mail.text).toContain('https://quotes.example.com/q/abc');
  });

  it('given an unsupported locale, then the mail is in the organization locale, else English', () => {
    expect(composeQuoteMail('ev-1', sent('fr'), sent('fr').customerUrl!, 'Fenster GmbH', 'nl').locale).toBe('nl');
    expect(composeQuoteMail('ev-1', sent('fr'), sent('fr').customerUrl!, 'Fenster GmbH').locale).toBe('en');
  });

  it('given HTML in the names, then the HTML body escapes it and links the quote', () => {
    const data = { ...sent('en'), customer: { name: '<script>alert(1)</script>', email: null } };
    const mail = composeQuoteMail('ev-1', data, data.customerUrl!, 'Fenster & <b>Co</b>');
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('<b>');
    expect(mail.html).toContain('Dear &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.html).toContain('Fenster &amp; &lt;b&gt;Co&lt;/b&gt;');
    expect(mail.html).toContain('<a href="https://quotes.example.com/q/abc">');
    expect(mail.text).toContain('Dear <script>alert(1)</script>');
    expect(mail.text).toContain('The quote is attached as a PDF.');
  });

  it('given a line break in a name, then the name stays on its line: it cannot start a line of its own', () => {
    const data = { ...sent('en'), customer: { name: 'Eve\nX-Injected: yes', email: null } };
    const mail = composeQuoteMail('ev-1', data, data.customerUrl!, 'Fenster\r\nGmbH');
    expect(mail.text).toContain('Dear Eve X-Injected: yes,');
    expect(mail.text.split('\n').some((line) => line.startsWith('X-Injected:'))).toBe(false);
    expect(mail.subject).toBe('Your quote Q-2026-000007 from Fenster GmbH');
  });

  it.each([
    ['a link', 'Ada\n\nIMPORTANT: pay the deposit at https://evil.example/pay'],
    ['www.', 'Ada, see www.evil.example'],
    ['a bare domain', 'Ada, pay the deposit at evil-example.com/pay'],
    ['a bare domain alone', 'Ada evil.com'],
    ['a domain with a full-width dot', 'Pay at evil．com/x'],
    ['a domain with an ideographic dot', 'Pay at evil｡com/x'],
    ['a domain with a combining mark inside', 'Pay at evil.c\u034Fom'],
    ['an IPv4 address', 'pay at 10.0.0.1/x'],
    ['WWW in capitals', 'Ada WWW.EVIL.EXAMPLE'],
    ['an e-mail address', 'Eve\nBcc: attacker@example.com'],
    ['a paragraph', 'Ada '.repeat(18)],
    ['only format characters', '\u202e\u200b'],
  ])('given a name holding %s, then the greeting leaves it out', (_what, name) => {
    const data = { ...sent('en'), customer: { name, email: null } };
    const mail = composeQuoteMail('ev-1', data, data.customerUrl!, 'Fenster GmbH');
    expect(mail.text.startsWith('Hello,\n')).toBe(true);
    expect(mail.html).toContain('<p>Hello,</p>');
    expect(mail.text).not.toMatch(/evil|EVIL|attacker|Ada Ada|10\.0/);
  });

  it.each(['Dr. Smith', 'J.R.R. Tolkien', 'Anne-Marie O\'Neil', 'Müller & Söhne GmbH', 'St. John-Smythe', 'J.Smith', 'H.Müller', 'А.С.Пушкин', 'Dr.med. Müller', 'Prof.Dr. Schmidt', 'K.-H. Schmidt', 'Ngũgĩ wa Thiong\'o'])('given the name %p, then the greeting says it', (name) => {
    const data = { ...sent('en'), customer: { name, email: null } };
    expect(composeQuoteMail('ev-1', data, data.customerUrl!, 'Fenster GmbH').text.startsWith(`Dear ${name},\n`)).toBe(true);
  });

  it('given a name with bidi overrides or zero-width characters, then the greeting drops them, as the PDF does', () => {
    const data = { ...sent('en'), customer: { name: 'Ada\u202e ecalevoL\u200b', email: null } };
    expect(composeQuoteMail('ev-1', data, data.customerUrl!, 'Fenster\u202eGmbH').text).toMatch(/^Dear Ada ecalevoL,\n[\s\S]*Kind regards,\nFensterGmbH\n$/);
  });

  it('given a stored mail, then the slot for the quote link is filled with the link derived for the attempt, escaped in the HTML', () => {
    const stored = composeQuoteMail('ev-1', sent('en'), QUOTE_LINK_SLOT, 'Fenster GmbH');
    expect(JSON.stringify(stored)).not.toContain('https://');
    const url = 'https://quotes.example.com/q/abc?x=1&y=2';
    const mail = withQuoteLink(stored, url);
    expect(mail.quoteUrl).toBe(url);
    expect(mail.text).toContain(url);
    expect(mail.html).toContain('<a href="https://quotes.example.com/q/abc?x=1&amp;y=2">');
    expect(JSON.stringify(mail)).not.toContain(QUOTE_LINK_SLOT);
  });

  it('given a name that looks like a placeholder, or holds the slot itself, then it stays the name', () => {
    for (const [name, greeting] of [['{{quoteLink}}', 'Dear {{quoteLink}},'], [QUOTE_LINK_SLOT, 'Dear quoteLink,']]) {
      const data = { ...sent('en'), customer: { name, email: null } };
      const mail = withQuoteLink(composeQuoteMail('ev-1', data, QUOTE_LINK_SLOT, 'Fenster GmbH'), 'https://quotes.example.com/q/abc');
      expect(mail.text).toContain(greeting);
      expect(mail.html).toContain(greeting);
    }
  });

  it('given the same mail twice, then the file mailer writes one message with its attachment', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quote-mail-'));
    try {
      const mailer = new FileQuoteMailer(loadConfig({ DATA_DIR: dataDir, MAIL_FROM: 'Fenster <angebote@fenster.example>' }));
      const mail = composeQuoteMail('ev-1', sent('de'), sent('de').customerUrl!, 'Fenster GmbH');
      const pdf = Buffer.from('%PDF-1.3 test');
      await mailer.send(mail, [{ filename: 'Q-2026-000007-v2.pdf', contentType: 'application/pdf', content: pdf }]);
      await mailer.send({ ...mail, subject: 'changed' }, []);
      expect(readdirSync(join(dataDir, 'mail')).sort()).toEqual(['ev-1.eml', 'ev-1.json']);
      const record = JSON.parse(readFileSync(join(dataDir, 'mail', 'ev-1.json'), 'utf8'));
      expect(record).toMatchObject({ ...mail, from: 'Fenster <angebote@fenster.example>', attachments: [{ filename: 'Q-2026-000007-v2.pdf', contentType: 'application/pdf', size: pdf.length }] });
      const eml = readFileSync(join(dataDir, 'mail', 'ev-1.eml'), 'utf8');
      expect(eml).toContain('From: Fenster <angebote@fenster.example>');
      expect(eml).toContain('To: ada@example.com, office@example.com');
      expect(eml).toContain('Content-Type: application/pdf; name=Q-2026-000007-v2.pdf');
      expect(eml).toContain(pdf.toString('base64'));
      expect(eml).toContain('Content-Type: text/html');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
