import { Inject, Injectable } from '@nestjs/common';
import type { EventFilter, RecordedEvent } from '@lib/event-store';
import { OrganizationDirectory } from '@lib/organizations';
import type { Reactor } from '@lib/runtime';
import { APP_CONFIG, Clock, type AppConfig } from '@lib/shared';
import { QUOTE_STREAM, type QuoteSent } from '../domain/quote.events';
import { documentLocale, formatMoney, formatValidUntil, type DocumentLocale } from '../documents/document-locale';
import { DocumentSignal } from '../documents/document-signal';
import { newJob } from '../documents/job-queue';
import { QuoteMailJobs } from '../documents/quote-mail-jobs';
import type { QuoteMail } from './quote-mailer';

interface MailFacts {
  organization: string;
  customer: string | null;
  quoteNumber: string;
  version: number;
  total: string;
  /** the worded expiry, as the PDF has it (`formatValidUntil`) */
  validUntil: string;
  url: string;
}

interface MailTexts {
  subject: (f: MailFacts) => string;
  body: (f: MailFacts) => string;
  /** the line above the link in the HTML body */
  linkText: string;
}

const TEXTS: Record<DocumentLocale, MailTexts> = {
  en: {
    subject: (f) => `Your quote ${f.quoteNumber} from ${f.organization}`,
    body: (f) =>
      `${f.customer ? `Dear ${f.customer}` : 'Hello'},\n\n${f.organization} has sent you quote ${f.quoteNumber} (version ${f.version}) ` +
      `for a total of ${f.total}. It is valid ${f.validUntil}.\n\nView, accept or decline it here:\n${f.url}\n\nThe quote is attached as a PDF.\n\nKind regards,\n${f.organization}\n`,
    linkText: 'View, accept or decline the quote',
  },
  de: {
    subject: (f) => `Ihr Angebot ${f.quoteNumber} von ${f.organization}`,
    body: (f) =>
      `${f.customer ? `Guten Tag ${f.customer}` : 'Guten Tag'},\n\n${f.organization} hat Ihnen das Angebot ${f.quoteNumber} (Version ${f.version}) ` +
      `über insgesamt ${f.total} gesendet. Es ist gültig ${f.validUntil}.\n\nHier können Sie es ansehen, annehmen oder ablehnen:\n${f.url}\n\nDas Angebot finden Sie als PDF im Anhang.\n\nMit freundlichen Grüßen\n${f.organization}\n`,
    linkText: 'Angebot ansehen, annehmen oder ablehnen',
  },
  nl: {
    subject: (f) => `Uw offerte ${f.quoteNumber} van ${f.organization}`,
    body: (f) =>
      `${f.customer ? `Beste ${f.customer}` : 'Hallo'},\n\n${f.organization} heeft u de offerte ${f.quoteNumber} (versie ${f.version}) ` +
      `gestuurd voor een totaal van ${f.total}. De offerte is geldig ${f.validUntil}.\n\nBekijk, accepteer of weiger de offerte hier:\n${f.url}\n\nDe offerte is als pdf bijgevoegd.\n\nMet vriendelijke groet,\n${f.organization}\n`,
    linkText: 'Offerte bekijken, accepteren of weigeren',
  },
};

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** The plain-text body as simple HTML: every text escaped, the quote link as a button-like link. */
function htmlBody(text: string, url: string, texts: MailTexts, locale: DocumentLocale): string {
  const paragraphs = text
    .trim()
    .split(/\n{2,}/)
    .map((p) => (p.includes(url) ? `<p><a href="${escapeHtml(url)}">${escapeHtml(texts.linkText)}</a><br>${escapeHtml(url)}</p>` : `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`));
  return `<!DOCTYPE html>\n<html lang="${locale}"><head><meta charset="utf-8"></head><body>\n${paragraphs.join('\n')}\n</body></html>\n`;
}

/**
 * A name as one line of text: a line break in it would start a line of its own in the mail ("Dear
 * Eve\nBcc: …"), and no other control character belongs in a greeting or a subject (nor can a
 * name then hold the slot of the quote link, which is between NULs).
 */
const oneLine = (text: string) => text.replace(/[\s\u0000-\u001F\u007F-\u009F]+/g, ' ').replace(/\p{Cf}/gu, '').trim();

/**
 * What mail clients may make a link of: a scheme, an address, `www.`, an IPv4 address, or a bare
 * domain (`evil.com`, `evil-example.com/pay`; found by a review): a lower-case label, a dot (also
 * the full-width and ideographic ones, which URL parsers read as dots) and a lower-case top-level
 * label of two or more letters. Names keep their capitals, so "J.Smith", "Dr.med. Müller",
 * "Dr. Smith" and "J.R.R. Tolkien" are greeted. Tested without combining marks, which a link may
 * hide between its letters (`evil.c\u034Fom`).
 */
const LINK_LIKE = /:\/\/|[wW]{3}[.。．｡]|@|\d{1,3}(?:[.。．｡]\d{1,3}){3}|(?<![\p{L}\p{N}])[a-z0-9][a-z0-9-]*[.。．｡][a-z]{2,}(?![\p{L}\p{N}])/u;
const linkLike = (text: string) => LINK_LIKE.test(text.normalize('NFKD').replace(/\p{M}/gu, ''));

/** Longer than any name a greeting needs ("Dr. Maria-Theresia von Habsburg-Lothringen" is 42). */
const GREETED_NAME_MAX = 70;

/**
 * The customer's name as the greeting may say it, or null for the greeting without a name. The
 * name is whatever was typed on the public configurator, and the mail goes out under the
 * organization's name: a "name" holding a link or an address ("Ada, pay the deposit at
 * https://…"), which mail clients make clickable, or a paragraph of text is left out rather than
 * sent on the organization's behalf (2026-11-27, found by a review). Format characters (bidi
 * overrides such as U+202E, zero-width spaces) are dropped from every name, as the PDF drops them.
 */
function greetedName(name: string | null): string | null {
  if (name === null) return null;
  const line = oneLine(name);
  if (line === '' || [...line].length > GREETED_NAME_MAX || linkLike(line)) return null;
  return line;
}

/**
 * Where the customer's quote link goes in a stored e-mail. The link is a credential (whoever holds
 * it can accept or reject the quote), so the mail queue keeps this instead, and each attempt puts
 * the link, derived again from the quote id, in its place (withQuoteLink). Until 2026-11-27 the
 * queue kept the link itself, in the read store and its backups (found by a security review).
 * Between NULs, which the names in a mail never hold (oneLine): as `{{quoteLink}}`, a customer
 * of that name was given the link in place of the name (a review).
 */
export const QUOTE_LINK_SLOT = '\u0000quoteLink\u0000';

/** The stored e-mail as it is sent: the quote link in the place of QUOTE_LINK_SLOT. */
export function withQuoteLink(message: QuoteMail, url: string): QuoteMail {
  return {
    ...message,
    text: message.text.replaceAll(QUOTE_LINK_SLOT, url),
    html: message.html.replaceAll(QUOTE_LINK_SLOT, escapeHtml(url)),
    quoteUrl: message.quoteUrl.replaceAll(QUOTE_LINK_SLOT, url),
  };
}

/**
 * The quote e-mail in the language recorded at the send (else the organization's, else English);
 * the total and the expiry formatted by the same functions as the PDF, so the two never disagree.
 */
export function composeQuoteMail(id: string, data: QuoteSent['data'], customerUrl: string, organizationName: string, organizationLocale?: string): QuoteMail {
  const locale = documentLocale(data.locale, organizationLocale);
  const facts: MailFacts = {
    organization: oneLine(organizationName),
    customer: greetedName(data.customer.name),
    quoteNumber: data.quote.quoteNumber,
    version: data.quote.version,
    total: formatMoney(data.quote.total, data.quote.currency, locale),
    validUntil: formatValidUntil(data.validUntil, locale),
    url: customerUrl,
  };
  const text = TEXTS[locale].body(facts);
  return {
    id,
    to: data.recipients,
    locale,
    subject: TEXTS[locale].subject(facts),
    text,
    html: htmlBody(text, customerUrl, TEXTS[locale], locale),
    quoteUrl: customerUrl,
    organizationId: data.organizationId,
    quoteId: data.quoteId,
    quoteNumber: data.quote.quoteNumber,
    version: data.quote.version,
  };
}

/**
 * Records the customer's e-mail on every `quote.v1.sent`: one delivery record per event (its id
 * is the event id, so a redelivered event creates nothing new). Runs in the outbox; the document
 * worker sends it with the version's PDF attached, retrying on the mail schedule.
 */
@Injectable()
export class QuoteSentMailReactor implements Reactor {
  readonly name = 'quote-sent-mail';
  readonly filter: EventFilter = { streamPrefixes: [QUOTE_STREAM], eventTypePrefixes: ['quote.v1.sent'] };

  constructor(
    private readonly mails: QuoteMailJobs,
    private readonly organizations: OrganizationDirectory,
    private readonly signal: DocumentSignal,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async react(event: RecordedEvent): Promise<void> {
    if (event.type !== 'quote.v1.sent') return;
    const data = (event as unknown as QuoteSent).data;
    const organization = await this.organizations.find(data.organizationId);
    // A link kept on the event (quotes first sent before links were derived) is stored as it is: the event holds it anyway.
    const message = composeQuoteMail(event.id, data, data.customerUrl ?? QUOTE_LINK_SLOT, organization?.name ?? '', organization?.locale);
    const created = await this.mails.create({
      ...newJob(event.id, this.clock.now(), this.config.mailRetryScheduleMs),
      organizationId: data.organizationId,
      quoteId: data.quoteId,
      version: data.quote.version,
      message,
      sentPosition: event.position,
      deliveredAt: null,
      pdfAttached: false,
    });
    if (created) this.signal.pending('mail');
  }
}
