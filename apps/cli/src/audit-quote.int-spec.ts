import { PassThrough } from 'node:stream';
import { applyEvents } from '@lib/event-sourcing';
import { SqliteEventStore } from '@lib/event-store';
import { SqliteReadStore, type ReadDocument } from '@lib/read-store';
import type { QuoteCommand } from '@lib/quotes/domain/quote.decider';
import { quoteStream } from '@lib/quotes/domain/quote.events';
import { createQuote, decidedEvents } from '@lib/quotes/domain/testing/quote-commands';
import { QUOTES, quotesProjection } from '@lib/quotes/projections/quotes.projection';
import { auditQuoteCommand, EXIT } from './commands';

const QUOTE = 'quo_1';
const CREATE = createQuote(QUOTE, 'org_1', [{ description: 'Window', quantity: 1, unitPrice: 100, itemType: 'window', itemKey: null, externalRef: null }], Date.UTC(2026, 0, 1));
const refChange = (n: number): QuoteCommand => ({ type: 'changeQuote', organizationId: 'org_1', terms: {}, externalRef: `CRM-${n}`, revise: false, ifMatch: null, at: Date.UTC(2026, 0, 2) + n });

describe('audit:quote while the quote is being edited', () => {
  it('given the quote changes during every attempt, then the verdict is CHANGING, not MISMATCH, and the exit code 1', async () => {
    const events = new SqliteEventStore({ file: ':memory:' });
    const reads = new SqliteReadStore({ file: ':memory:' });
    try {
      const commands = [CREATE];
      const store = async () => {
        const [event] = decidedEvents(commands).slice(-1);
        await events.appendToStream(quoteStream(QUOTE), [{ ...event, metadata: { actor: 'admin' } }], 'any');
        await applyEvents(reads, quotesProjection, await events.readStream(quoteStream(QUOTE)));
      };
      await store();
      // Each read of the quote document, after the audit read the stream, comes after one more edit.
      const editing = new Proxy(reads, {
        get: (target, property) =>
          property === 'get'
            ? async (collection: string, id: string) => {
                if (collection === QUOTES) {
                  commands.push(refChange(commands.length));
                  await store();
                }
                return target.get<ReadDocument>(collection, id);
              }
            : Reflect.get(target, property, target),
      });
      const out = new PassThrough();
      const err = new PassThrough();
      const code = await auditQuoteCommand({ events, reads: editing, projections: () => [], out, err }, QUOTE, false);
      const printed = String(out.read());
      expect(code).toBe(EXIT.failed);
      expect(printed).toContain('CHANGING: the quote changed while it was audited, each of 5 times');
      expect(printed).not.toContain('MISMATCH');
    } finally {
      await reads.close();
      await events.close();
    }
  });
});
