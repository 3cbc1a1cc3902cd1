import { Injectable } from '@nestjs/common';
import type { EventFilter, RecordedEvent } from '@lib/event-store';
import { OrganizationDirectory } from '@lib/organizations';
import type { Reactor } from '@lib/runtime';
import { QUOTE_STREAM, type QuoteSent } from '../domain/quote.events';
import { QuoteMailer, type QuoteMail } from './quote-mailer';

type Locale = 'en' | 'de' | 'nl';

interface MailFacts {
  organization: string;
  customer: string | null;
  quoteNumber: string;
  version: number;
  total: string;
  validUntil: string;
  url: string;
}

const TEXTS: Record<Locale, { subject: (f: MailFacts) => string; body: (f: MailFacts) => string }> = {
  en: {
    subject: (f) => `Your quote ${f.quoteNumber} from ${f.organization}`,
    body: (f) =>
      `${f.customer ? `Dear ${f.customer}` : 'Hello'},\n\n${f.organization} has sent you quote ${f.quoteNumber} (version ${f.version}) ` +
      `for a total of ${f.total}. It is valid until ${f.validUntil}.\n\nView, accept or decline it here:\n${f.url}\n\nKind regards,\n${f.organization}\n`,
  },
  de: {
    subject: (f) => `Ihr Angebot ${f.quoteNumber} von ${f.organization}`,
    body: (f) =>
      `${f.customer ? `Guten Tag ${f.customer}` : 'Guten Tag'},\n\n${f.organization} hat Ihnen das Angebot ${f.quoteNumber} (Version ${f.version}) ` +
      `über insgesamt ${f.total} gesendet. Es ist gültig bis ${f.validUntil}.\n\nHier können Sie es ansehen, annehmen oder ablehnen:\n${f.url}\n\nMit freundlichen Grüßen\n${f.organization}\n`,
  },
  nl: {
    subject: (f) => `Uw offerte ${f.quoteNumber} van ${f.organization}`,
    body: (f) =>
      `${f.customer ? `Beste ${f.customer}` : 'Hallo'},\n\n${f.organization} heeft u offerte ${f.quoteNumber} (versie ${f.version}) ` +
      `gestuurd voor een totaal van ${f.total}. De offerte is geldig tot ${f.validUntil}.\n\nBekijk, accepteer of weiger de offerte hier:\n${f.url}\n\nMet vriendelijke groet,\n${f.organization}\n`,
  },
};

const localeOf = (locale: string): Locale => (locale in TEXTS ? (locale as Locale) : 'en');

/** The quote e-mail in the recipient's language; amounts and dates formatted for that locale. */
export function composeQuoteMail(id: string, data: QuoteSent['data'], organizationName: string): QuoteMail {
  const locale = localeOf(data.locale);
  const facts: MailFacts = {
    organization: organizationName,
    customer: data.customer.name,
    quoteNumber: data.quote.quoteNumber,
    version: data.quote.version,
    total: new Intl.NumberFormat(locale, { style: 'currency', currency: data.quote.currency }).format(data.quote.total),
    validUntil: new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }).format(data.validUntil),
    url: data.customerUrl,
  };
  return {
    id,
    to: data.recipients,
    locale,
    subject: TEXTS[locale].subject(facts),
    text: TEXTS[locale].body(facts),
    quoteUrl: data.customerUrl,
    organizationId: data.organizationId,
    quoteId: data.quoteId,
    quoteNumber: data.quote.quoteNumber,
  };
}

/**
 * Mails the customer on every `quote.v1.sent`. Runs in the outbox, at least once per event; the
 * mailer writes one mail per event id, so a redelivered event does not mail twice.
 */
@Injectable()
export class QuoteSentMailReactor implements Reactor {
  readonly name = 'quote-sent-mail';
  readonly filter: EventFilter = { streamPrefixes: [QUOTE_STREAM], eventTypePrefixes: ['quote.v1.sent'] };

  constructor(
    private readonly mailer: QuoteMailer,
    private readonly organizations: OrganizationDirectory,
  ) {}

  async react(event: RecordedEvent): Promise<void> {
    const data = (event as unknown as QuoteSent).data;
    const organization = await this.organizations.find(data.organizationId);
    await this.mailer.send(composeQuoteMail(event.id, data, organization?.name ?? ''));
  }
}
