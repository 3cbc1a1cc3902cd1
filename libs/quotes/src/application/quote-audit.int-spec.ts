import { applyEvents } from '@lib/event-sourcing';
import { SqliteEventStore } from '@lib/event-store';
import { SqliteReadStore, type ReadDocument } from '@lib/read-store';
import { quoteStream, type QuoteEvent, type QuoteLineInput } from '../domain/quote.events';
import type { QuoteCommand } from '../domain/quote.decider';
import { createQuote, decidedEvents } from '../domain/testing/quote-commands';
import { QUOTE_LINKS, QUOTE_VERSIONS, QUOTES, quotesProjection, versionEntryId, type QuoteLinkDocument, type QuoteVersionDocument } from '../projections/quotes.projection';
import { auditQuote } from './quote-audit';
import { hashQuoteToken } from './quote-queries';

const ORG = 'org_1';
const QUOTE = 'quo_1';
const T0 = Date.UTC(2026, 0, 1);
const TOKEN = 'customer-token-1';
const LINK = { tokenHash: hashQuoteToken(TOKEN), customerUrl: `http://localhost:3000/q/${TOKEN}` };
const line = (description: string, unitPrice: number): QuoteLineInput => ({ description, quantity: 1, unitPrice, itemType: 'window', itemKey: null, externalRef: null });

/**
 * A quote whose draft breakdown was replaced, sent, viewed, revised, sent again and accepted by
 * the customer through its link. Its history: version 1 twice (created, replaced), then version 2.
 */
const COMMANDS: QuoteCommand[] = [
    createQuote(QUOTE, ORG, [line('Window', 100)], T0),
    { type: 'replaceLineItems', organizationId: ORG, lineItems: [line('Window, measured', 100)], revise: false, changeDescription: 'measured', ifMatch: null, at: T0 + 1 },
    { type: 'sendQuote', organizationId: ORG, recipients: ['ada@example.com'], locale: null, newLink: LINK, ifMatch: null, at: T0 + 2 },
    { type: 'viewQuote', tokenHash: LINK.tokenHash, at: T0 + 3 },
    { type: 'changeQuote', organizationId: ORG, terms: { taxRate: 9 }, revise: true, ifMatch: null, at: T0 + 4 },
    { type: 'sendQuote', organizationId: ORG, recipients: ['ada@example.com'], locale: null, newLink: LINK, ifMatch: null, at: T0 + 5 },
    { type: 'acceptQuote', tokenHash: LINK.tokenHash, name: 'Ada', at: T0 + 6 },
];
const decided = (): QuoteEvent[] => decidedEvents(COMMANDS);

/** The event of the `n`-th change of the accepted quote's external reference (1, 2…): any status takes one. */
const externalRefChange = (n: number): QuoteEvent =>
  decidedEvents([...COMMANDS, ...Array.from({ length: n }, (_, i): QuoteCommand => ({ type: 'changeQuote', organizationId: ORG, terms: {}, externalRef: `CRM-${i + 1}`, revise: false, ifMatch: null, at: T0 + 7 + i }))]).at(-1)!;

/** In-memory stores holding the decided quote's events and the read model built from them. */
async function decidedQuoteStores(): Promise<{ events: SqliteEventStore; reads: SqliteReadStore }> {
  const events = new SqliteEventStore({ file: ':memory:' });
  const reads = new SqliteReadStore({ file: ':memory:' });
  await events.appendToStream(quoteStream(QUOTE), decided().map((event) => ({ ...event, metadata: { actor: 'admin' } })), 'no_stream');
  await applyEvents(reads, quotesProjection, await events.readStream(quoteStream(QUOTE)));
  return { events, reads };
}

describe('auditQuote', () => {
  let events: SqliteEventStore;
  let reads: SqliteReadStore;

  beforeEach(async () => {
    ({ events, reads } = await decidedQuoteStores());
  });
  afterEach(async () => {
    await reads.close();
    await events.close();
  });

  describe('the customer link', () => {
    const storedLink = async () => (await reads.get<QuoteLinkDocument>(QUOTE_LINKS, LINK.tokenHash))!;
    const store = (link: QuoteLinkDocument) => reads.upsert([{ collection: QUOTE_LINKS, document: link }]);

    it('given the read model as the projector wrote it, then the audit finds no difference', async () => {
      expect(await storedLink()).toMatchObject({ status: 'accepted', offer: { version: 2, total: 109 } });
      expect((await auditQuote(events, reads, QUOTE))?.mismatches).toEqual([]);
    });

    it('given a stored link whose offer differs from what was sent, then the audit names the link and the field', async () => {
      const link = await storedLink();
      await store({ ...link, offer: { ...link.offer, total: 1 } });
      const { mismatches } = (await auditQuote(events, reads, QUOTE))!;
      expect(mismatches).toEqual([`link ${LINK.tokenHash}.offer.total: replay 109, stored 1`]);
      expect(mismatches.join('\n')).not.toContain(TOKEN);
    });

    it('given a stale stored link status, then the audit reports it', async () => {
      await store({ ...(await storedLink()), status: 'viewed', respondedAt: null });
      expect((await auditQuote(events, reads, QUOTE))?.mismatches).toEqual([
        `link ${LINK.tokenHash}.status: replay "accepted", stored "viewed"`,
        `link ${LINK.tokenHash}.respondedAt: replay ${T0 + 6}, stored null`,
      ]);
    });

    it('given the stored link is missing, then the audit reports it', async () => {
      await reads.delete(QUOTE_LINKS, LINK.tokenHash);
      expect((await auditQuote(events, reads, QUOTE))?.mismatches).toEqual([`link ${LINK.tokenHash}: replay has it, the store has nothing (not applied by the projector yet, or lost)`]);
    });

    it('given a stored link the quote was never sent with, then the audit reports it, and a link of another quote is not its concern', async () => {
      const stray = hashQuoteToken('never-sent');
      await store({ ...(await storedLink()), id: stray });
      await store({ ...(await storedLink()), id: hashQuoteToken('other-quote'), quoteId: 'quo_2' });
      expect((await auditQuote(events, reads, QUOTE))?.mismatches).toEqual([`link ${stray}: stored, but the replay never sent the quote with it`]);
    });

    it('given the link stored under another quote, then the audit names the quote it opens', async () => {
      await store({ ...(await storedLink()), quoteId: 'quo_2' });
      expect((await auditQuote(events, reads, QUOTE))?.mismatches).toEqual([`link ${LINK.tokenHash}.quoteId: replay "${QUOTE}", stored "quo_2"`]);
    });
  });

  describe('a stored version snapshot with a field missing or extra', () => {
    /** The stored history entry `seq` (0 = the oldest), its snapshot changed by `tamper`. */
    async function tamperEntry(seq: number, tamper: (snapshot: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
      const stored = (await reads.get<QuoteVersionDocument>(QUOTE_VERSIONS, versionEntryId(QUOTE, seq)))!;
      const snapshot = tamper({ ...(stored.snapshot as unknown as Record<string, unknown>) });
      await reads.upsert([{ collection: QUOTE_VERSIONS, document: { ...stored, snapshot } }]);
    }

    it('given the newest snapshot without its line items, when audited, then the audit names the field as missing instead of failing', async () => {
      await tamperEntry(2, (snapshot) => {
        delete snapshot.lineItems;
        return snapshot;
      });
      const { mismatches } = (await auditQuote(events, reads, QUOTE))!;
      expect(mismatches).toHaveLength(1);
      expect(mismatches[0]).toMatch(/^version 2 \(entry 3\)\.snapshot\.lineItems: replay \[.+, stored \(missing\)$/);
    });

    it('given one line item of a snapshot changed, or one too many, then the audit names that line and field, not the whole array', async () => {
      await tamperEntry(2, (snapshot) => {
        const lineItems = structuredClone(snapshot.lineItems) as Array<Record<string, unknown>>;
        lineItems[0].total = Number(lineItems[0].total) + 0.01;
        return { ...snapshot, lineItems };
      });
      const [changed] = (await auditQuote(events, reads, QUOTE))!.mismatches;
      expect(changed).toMatch(/^version 2 \(entry 3\)\.snapshot\.lineItems\[0\]\.total: replay [\d.]+, stored [\d.]+$/);
      await tamperEntry(2, (snapshot) => ({ ...snapshot, lineItems: [...(snapshot.lineItems as unknown[]), { description: 'Extra' }] }));
      expect((await auditQuote(events, reads, QUOTE))!.mismatches).toEqual([expect.stringMatching(/^version 2 \(entry 3\)\.snapshot\.lineItems: replay (\d+) items, stored \d+$/), changed]);
    });

    it('given a snapshot with a field the replay does not make, when audited, then the audit names the extra field', async () => {
      await tamperEntry(2, (snapshot) => ({ ...snapshot, discount: 5 }));
      expect((await auditQuote(events, reads, QUOTE))?.mismatches).toEqual(['version 2 (entry 3).snapshot.discount: replay (missing), stored 5']);
    });

    it('given the two entries of version 1 tampered, then each is named by the version GET /versions shows and its place in the history', async () => {
      await tamperEntry(0, (snapshot) => ({ ...snapshot, total: 1 }));
      await tamperEntry(1, (snapshot) => ({ ...snapshot, total: 2 }));
      expect((await auditQuote(events, reads, QUOTE))?.mismatches).toEqual([
        'version 1 (entry 1).snapshot.total: replay 121, stored 1',
        'version 1 (entry 2).snapshot.total: replay 121, stored 2',
      ]);
    });

    it('given a stored entry the replay does not make, then the audit names it by its version and place', async () => {
      const newest = (await reads.get<QuoteVersionDocument>(QUOTE_VERSIONS, versionEntryId(QUOTE, 2)))!;
      await reads.upsert([{ collection: QUOTE_VERSIONS, document: { ...newest, id: versionEntryId(QUOTE, 3), seq: 3 } }]);
      expect((await auditQuote(events, reads, QUOTE))?.mismatches).toEqual([`version 2 (entry 4, id ${versionEntryId(QUOTE, 3)}): stored, but the replay has no such entry`]);
    });
  });
});

describe('auditQuote while the quote changes or the projector catches up', () => {
  let events: SqliteEventStore;
  let reads: SqliteReadStore;
  let changes = 0;

  beforeEach(async () => {
    ({ events, reads } = await decidedQuoteStores());
    changes = 0;
  });
  afterEach(async () => {
    await reads.close();
    await events.close();
  });

  /** The next change of the quote, stored as the API does: appended, then projected. */
  const change = async (project = true) => {
    await events.appendToStream(quoteStream(QUOTE), [{ ...externalRefChange(++changes), metadata: { actor: 'admin' } }], 'any');
    if (project) await applyEvents(reads, quotesProjection, await events.readStream(quoteStream(QUOTE)));
  };

  /** The read store, with `before` run each time the audit reads the quote document (after it read the stream). */
  const readingQuote = (before: () => Promise<void>) =>
    new Proxy(reads, {
      get: (target, property) =>
        property === 'get'
          ? async (collection: string, id: string) => {
              if (collection === QUOTES) await before();
              return target.get<ReadDocument>(collection, id);
            }
          : Reflect.get(target, property, target),
    });

  it('given the quote changed after the audit read its stream, then the audit reads it again and compares at one position', async () => {
    let once = true;
    const audit = (await auditQuote(events, readingQuote(async () => void (once && ((once = false), await change()))), QUOTE))!;
    expect(audit.mismatches).toEqual([]);
    expect(audit.changedDuringAudit).toBe(false);
    expect(audit.steps.at(-1)).toMatchObject({ trigger: 'external reference change', details: { externalRef: 'CRM-1' } });
  });

  it('given the projector had not applied the last event yet, then the audit waits for it instead of reporting a mismatch', async () => {
    await change(false);
    setTimeout(async () => void (await applyEvents(reads, quotesProjection, await events.readStream(quoteStream(QUOTE)))), 100);
    const audit = (await auditQuote(events, reads, QUOTE, { attempts: 20, waitMs: 50 }))!;
    expect(audit.mismatches).toEqual([]);
  });

  it('given the quote changes during every attempt, then the audit says so, and compares nothing that was stored after the stream was read', async () => {
    const audit = (await auditQuote(events, readingQuote(() => change()), QUOTE, { attempts: 3, waitMs: 0 }))!;
    expect(audit.changedDuringAudit).toBe(true);
    expect(audit.mismatches.map((line) => line.replace(/\d+, the/, 'P, the').replace(/is at \d+/, 'is at R'))).toEqual(
      ['quote', 'version 2 (entry 3)'].map((what) => `${what}: stored as of the event at position P, the replay's last change of it is at R (the quote changed during the audit)`),
    );
  });

  it('given documents stored as of a position no event of the quote has, then the audit says MISMATCH, not that the quote changed during it', async () => {
    const quote = (await reads.get<ReadDocument>(QUOTES, QUOTE))!;
    const head = (await events.readStream(quoteStream(QUOTE))).at(-1)!.position;
    // past the end of the log (a read store newer than a restored events.db) …
    await reads.upsert([{ collection: QUOTES, document: { ...quote, _pos: head + 50 } as ReadDocument }]);
    const past = (await auditQuote(events, reads, QUOTE, { attempts: 5, waitMs: 0 }))!;
    expect(past.changedDuringAudit).toBe(false);
    expect(past.mismatches).toEqual([`quote: stored as of position ${head + 50}, and no event of this quote is there (its stream ends at ${head}): the read store is ahead of the event log, or holds another quote's data`]);
    // … and at an event of the stream that did not change it (the first history entry, as of the last event)
    await reads.upsert([{ collection: QUOTES, document: quote }]);
    const first = (await reads.get<ReadDocument>(QUOTE_VERSIONS, versionEntryId(QUOTE, 0)))!;
    await reads.upsert([{ collection: QUOTE_VERSIONS, document: { ...first, _pos: head } as ReadDocument }]);
    const within = (await auditQuote(events, reads, QUOTE, { attempts: 5, waitMs: 0 }))!;
    expect([within.changedDuringAudit, within.mismatches]).toEqual([false, [expect.stringMatching(new RegExp(`^version 1 \\(entry 1\\): stored as of the event at position ${head}, which does not change it in the replay \\(its last change is at \\d+\\)$`))]]);
  });

  it('given the projector stays behind, then the audit reports what it has not applied', async () => {
    await change(false);
    const audit = (await auditQuote(events, reads, QUOTE, { attempts: 2, waitMs: 0 }))!;
    expect(audit.changedDuringAudit).toBe(false);
    expect(audit.mismatches.map((line) => line.replace(/\d+, the/, 'P, the').replace(/is at \d+/, 'is at R'))).toEqual(
      ['quote', 'version 2 (entry 3)'].map((what) => `${what}: stored as of the event at position P, the replay's last change of it is at R (not applied by the projector yet, or lost)`),
    );
  });
});

describe('auditQuote of figures that were wrong when they were stored', () => {
  it('given a line total in the log that is not its quantity × unit price, and the read model built from that log, then the audit names the figures that do not add up', async () => {
    const events = new SqliteEventStore({ file: ':memory:' });
    const reads = new SqliteReadStore({ file: ':memory:' });
    try {
      const [created] = decidedEvents([createQuote(QUOTE, ORG, [line('Window', 10)], T0)]);
      // An edited log: the line total 11 where 1 × 10 is 10, and the totals as the line says.
      const data = structuredClone(created.data) as any;
      data.lineItems[0].total = 11;
      const edited = { ...created, data, metadata: { actor: 'admin' } } as any;
      await events.appendToStream(quoteStream(QUOTE), [edited], 'no_stream');
      await applyEvents(reads, quotesProjection, await events.readStream(quoteStream(QUOTE)));
      const { mismatches } = (await auditQuote(events, reads, QUOTE))!;
      // The read model equals the replay; only the arithmetic shows the edit.
      expect(mismatches).toEqual([expect.stringMatching(/^#0 \(create\) arithmetic: lineItems\[0\]\.total is 11, but 1 × 10 is 10 EUR$/)]);
    } finally {
      await reads.close();
      await events.close();
    }
  });
});
