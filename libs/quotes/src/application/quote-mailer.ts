import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import { writeFileDurably, type AppConfig } from '@lib/shared';

export interface QuoteMail {
  /** the id of the event the mail is for: the delivery record's id and the Message-ID's local part */
  id: string;
  to: string[];
  locale: string;
  subject: string;
  text: string;
  /** the same message as simple HTML, every user-provided text escaped */
  html: string;
  quoteUrl: string;
  organizationId: string;
  quoteId: string;
  quoteNumber: string;
  version: number;
}

export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** The e-mail port of quotes. Called only from the outbox (the document worker), with retries. */
export abstract class QuoteMailer {
  /** Resolves once the message is accepted (SMTP) or written (files); throws when it was not. */
  abstract send(message: QuoteMail, attachments: MailAttachment[]): Promise<void>;
}

/** The message nodemailer sends or writes: the same for every transport. */
function toNodemailer(message: QuoteMail, attachments: MailAttachment[], from: string): Mail.Options {
  const domain = /@([^>\s]+)>?$/.exec(from)?.[1] ?? 'localhost';
  return {
    from,
    to: message.to,
    subject: message.subject,
    text: message.text,
    html: message.html,
    // stable per send: a receiver can recognise a retried message
    messageId: `<${message.id.replace(/[^A-Za-z0-9_.-]/g, '_')}@${domain}>`,
    headers: { 'Content-Language': message.locale },
    attachments: attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })),
  };
}

/**
 * The embedded default: nodemailer builds the complete message, written as
 * `DATA_DIR/mail/<id>.eml` with `<id>.json` beside it (what was sent to whom, without the
 * attachment bytes), and one log line. Nothing leaves the machine, so the product works offline.
 */
export class FileQuoteMailer extends QuoteMailer {
  private readonly logger = new Logger('QuoteMail');
  private readonly transport: Transporter;

  constructor(private readonly config: AppConfig) {
    super();
    this.transport = createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  }

  async send(message: QuoteMail, attachments: MailAttachment[]): Promise<void> {
    const directory = join(this.config.dataDir, 'mail');
    const name = message.id.replace(/[^A-Za-z0-9_-]/g, '_');
    const json = join(directory, `${name}.json`);
    if (existsSync(json)) return;
    await mkdir(directory, { recursive: true });
    const built = (await this.transport.sendMail(toNodemailer(message, attachments, this.config.mailFrom))) as { message: Buffer };
    await writeFileDurably(join(directory, `${name}.eml`), built.message);
    const record = { ...message, from: this.config.mailFrom, eml: `${name}.eml`, attachments: attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, size: a.content.length })) };
    await writeFileDurably(json, Buffer.from(`${JSON.stringify(record, null, 2)}\n`));
    this.logger.log(`${message.quoteNumber} v${message.version} mailed to ${recipients(message)} (${join(directory, `${name}.eml`)})`);
  }
}


/** SMTP_URL set: every message goes to that server; a refusal or a connection error throws (and is retried). */
export class SmtpQuoteMailer extends QuoteMailer {
  private readonly logger = new Logger('QuoteMail');
  private readonly transport: Transporter;

  constructor(private readonly config: AppConfig & { smtpUrl: string }) {
    super();
    // every attempt ends well within the job lease (2 min), so a hung server never doubles a mail
    this.transport = createTransport({ url: config.smtpUrl, connectionTimeout: 30_000, greetingTimeout: 20_000, socketTimeout: 60_000, dnsTimeout: 10_000 });
  }

  async send(message: QuoteMail, attachments: MailAttachment[]): Promise<void> {
    const info = await this.transport.sendMail(toNodemailer(message, attachments, this.config.mailFrom));
    this.logger.log(`${message.quoteNumber} v${message.version} mailed to ${recipients(message)} over SMTP (${String(info.response ?? '')})`);
  }
}

/** How a mail's recipients are logged: counted, not named (their addresses are personal data; the mail's record holds them). */
const recipients = (message: QuoteMail) => (message.to.length === 1 ? '1 recipient' : `${message.to.length} recipients`);

export function createQuoteMailer(config: AppConfig): QuoteMailer {
  return config.smtpUrl ? new SmtpQuoteMailer({ ...config, smtpUrl: config.smtpUrl }) : new FileQuoteMailer(config);
}
