import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { APP_CONFIG, Clock, type AppConfig } from '@lib/shared';
import { EXPIRING_SOON_MS } from '../domain/quote.events';
import { ExpireQuote, NoticeQuoteExpiringSoon } from './quote.commands';
import { QuoteQueries } from './quote-queries';

const PAGE = 100;

/**
 * decisions §7: every QUOTE_EXPIRY_CHECK_MS, sent and viewed quotes past validUntil expire and
 * those within 3 days of it get their expiring-soon notice. Runs in the outbox process only
 * (QuoteExpiryModule). Safe to run twice: the quote decides whether a transition is due, and a
 * transition that already happened is not repeated.
 */
@Injectable()
export class QuoteExpiryScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('QuoteExpiry');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly queries: QuoteQueries,
    private readonly commands: CommandBus,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), this.config.quoteExpiryCheckMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One check; a check still running when the next is due is not overlapped. */
  tick(): Promise<void> {
    if (!this.running) {
      this.running = this.check().then(
        () => undefined,
        (error) => this.logger.error(`expiry check failed: ${String(error)}`),
      );
      void this.running.finally(() => (this.running = null));
    }
    return this.running;
  }

  /** Returns how many quotes expired and how many got their expiring-soon notice. */
  async check(): Promise<{ expired: number; noticed: number }> {
    const now = this.clock.now();
    const counts = { expired: 0, noticed: 0 };
    let after: unknown[] | undefined;
    do {
      const page = await this.queries.openQuotesEndingBy(now + EXPIRING_SOON_MS, PAGE, after);
      for (const quote of page.items) {
        try {
          if (quote.validUntil <= now) {
            if (await this.commands.execute<ExpireQuote, boolean>(new ExpireQuote(quote.id))) counts.expired++;
          } else if (quote.expiringSoonNoticedFor !== quote.validUntil) {
            if (await this.commands.execute<NoticeQuoteExpiringSoon, boolean>(new NoticeQuoteExpiringSoon(quote.id))) counts.noticed++;
          }
        } catch (error) {
          // One quote failing (e.g. a concurrent change) must not hold up the others; the next check retries it.
          this.logger.warn(`expiry check of ${quote.id} failed: ${String(error)}`);
        }
      }
      after = page.nextAfter ?? undefined;
    } while (after);
    return counts;
  }
}
