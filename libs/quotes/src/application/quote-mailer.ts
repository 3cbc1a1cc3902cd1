import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@lib/shared';

export interface QuoteMail {
  /** the id of the event the mail is for: sending the same id twice delivers one mail */
  id: string;
  to: string[];
  locale: string;
  subject: string;
  text: string;
  quoteUrl: string;
  organizationId: string;
  quoteId: string;
  quoteNumber: string;
}

/** The e-mail port of quotes. Called only from the outbox (QuoteSentMailReactor). */
export abstract class QuoteMailer {
  abstract send(message: QuoteMail): Promise<void>;
}

/**
 * The default mailer: each message becomes `DATA_DIR/mail/<event id>.json`, written atomically,
 * and one log line. Nothing leaves the machine; SMTP delivery is a separate adapter.
 */
@Injectable()
export class FileQuoteMailer extends QuoteMailer {
  private readonly logger = new Logger('QuoteMail');

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  async send(message: QuoteMail): Promise<void> {
    const directory = join(this.config.dataDir, 'mail');
    const file = join(directory, `${message.id.replace(/[^A-Za-z0-9_-]/g, '_')}.json`);
    if (existsSync(file)) return;
    await mkdir(directory, { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(message, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, file);
    this.logger.log(`${message.quoteNumber} mailed to ${message.to.join(', ')} (${file})`);
  }
}
