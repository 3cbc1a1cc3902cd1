import { Logger } from '@nestjs/common';
import type { CommandBus } from '@nestjs/cqrs';
import { AggregateRepository, fold, ReadYourWrites } from '@lib/event-sourcing';
import { SqliteEventStore } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import { MarkSubmissionQuoted } from '@lib/submissions';
import { quoteDecider, type QuoteDraft } from '../domain/quote.decider';
import { quoteNumberStream, type QuoteNumberReserved } from '../domain/quote-number.events';
import { quoteStream, type QuoteEvent } from '../domain/quote.events';
import { QuoteNumberAllocator } from './quote-number-allocator';

const T2026 = Date.UTC(2026, 5, 1);
const T2027 = Date.UTC(2027, 0, 1, 0, 0, 1);

describe('QuoteNumberAllocator (embedded event store)', () => {
  let events: SqliteEventStore;
  let reads: SqliteReadStore;
  let dispatched: MarkSubmissionQuoted[];
  let counter = 0;

  /** An allocator as one process has it: its own in-memory queue and tail hints, the shared stores. */
  const allocator = () => {
    const readYourWrites = new ReadYourWrites();
    const commands = { execute: async (command: MarkSubmissionQuoted) => void dispatched.push(command) } as unknown as CommandBus;
    return new QuoteNumberAllocator(events, reads, new AggregateRepository(events, readYourWrites), readYourWrites, commands);
  };

  const draft = (organizationId = 'org_1', at = T2026): QuoteDraft => ({
    quoteId: `quo_${++counter}`,
    organizationId,
    submissionId: `sub_${counter}`,
    customer: { name: 'Ada', email: 'ada@example.com' },
    locale: 'en',
    terms: { currency: 'EUR', taxRate: 21, validityDays: 30, reference: null, notes: null },
    lineItems: [{ description: 'Window', quantity: 1, unitPrice: 100, itemType: 'window', itemKey: null, externalRef: null }],
    pricingSource: 'supplied',
    at,
  });

  const numberOf = async (quoteId: string) => fold(quoteDecider, (await events.readStream(quoteStream(quoteId))) as unknown as QuoteEvent[])?.quoteNumber;

  /** What a process that crashed right after taking a number leaves behind. */
  async function reserveWithoutQuote(reservation: QuoteDraft, sequence: number, year = 2026) {
    const reserved: QuoteNumberReserved = {
      type: 'quoteNumber.v1.reserved',
      data: { organizationId: reservation.organizationId, year, sequence, quoteNumber: `Q-${year}-${String(sequence).padStart(6, '0')}`, quoteId: reservation.quoteId, draft: reservation, at: reservation.at },
    };
    await events.appendToStream(quoteNumberStream(reservation.organizationId, year), [{ ...reserved, metadata: { actor: 'apiKey:key_1' } }], sequence === 1 ? 'no_stream' : sequence - 2);
  }

  beforeEach(() => {
    events = new SqliteEventStore({ file: ':memory:' });
    reads = new SqliteReadStore({ file: ':memory:' });
    dispatched = [];
  });
  afterEach(async () => {
    await events.close();
    await reads.close();
  });

  it('numbers quotes per organization and per year, starting at 1', async () => {
    const numbers = allocator();
    expect((await numbers.create(draft('org_1'), 'a')).quoteNumber).toBe('Q-2026-000001');
    expect((await numbers.create(draft('org_1'), 'a')).quoteNumber).toBe('Q-2026-000002');
    expect((await numbers.create(draft('org_2'), 'a')).quoteNumber).toBe('Q-2026-000001');
    expect((await numbers.create(draft('org_1', T2027), 'a')).quoteNumber).toBe('Q-2027-000001');
    expect(dispatched).toHaveLength(4);
  });

  it('given two processes creating 30 quotes at once, then the numbers are 1..30, each on exactly one quote', async () => {
    const processes = [allocator(), allocator()];
    const drafts = Array.from({ length: 30 }, () => draft());
    const created = await Promise.all(drafts.map((d, i) => processes[i % 2].create(d, 'a')));
    const expected = Array.from({ length: 30 }, (_, i) => `Q-2026-${String(i + 1).padStart(6, '0')}`);
    expect(created.map((c) => c.quoteNumber).sort()).toEqual(expected);
    const stored = await Promise.all(drafts.map((d) => numberOf(d.quoteId)));
    expect(stored.sort()).toEqual(expected);
    expect(await events.readStream(quoteNumberStream('org_1', 2026))).toHaveLength(30);
  });

  it('given a draft the quote refuses, then no number is reserved and the next quote takes the number', async () => {
    const numbers = allocator();
    const refused = { ...draft(), lineItems: [[]] as unknown as QuoteDraft['lineItems'] };
    await expect(numbers.create(refused, 'a')).rejects.toThrow();
    expect(await events.readStream(quoteNumberStream('org_1', 2026))).toEqual([]);
    expect((await numbers.create(draft(), 'a')).quoteNumber).toBe('Q-2026-000001');
  });

  it('given a stored reservation whose draft cannot become a quote, then quoting goes on past it: its number stays unused and an error says so', async () => {
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      await reserveWithoutQuote({ ...draft(), lineItems: [[]] as unknown as QuoteDraft['lineItems'] }, 1);
      const numbers = allocator();
      expect(await numbers.recoverAll()).toBe(0);
      const next = draft();
      expect((await numbers.create(next, 'a')).quoteNumber).toBe('Q-2026-000002');
      expect(await numberOf(next.quoteId)).toBe('Q-2026-000002');
      expect(errors.mock.calls.map(([message]) => String(message))).toContainEqual(expect.stringContaining('the reservation of Q-2026-000001'));
    } finally {
      errors.mockRestore();
    }
  });

  it('given a process that stopped after taking a number, then the next allocation creates that quote first and takes the next number', async () => {
    const interrupted = draft();
    await reserveWithoutQuote(interrupted, 1);
    const next = await allocator().create(draft(), 'a');
    expect(next.quoteNumber).toBe('Q-2026-000002');
    expect(await numberOf(interrupted.quoteId)).toBe('Q-2026-000001');
    // the recovered quote moves its submission too, as its creator would have
    expect(dispatched.map((c) => c.submissionId)).toEqual([interrupted.submissionId, `sub_${counter}`]);
    expect((await events.readStream(quoteStream(interrupted.quoteId)))[0].metadata.actor).toBe('apiKey:key_1');
  });

  describe('given a retry of a keyed request, whose draft has the id of the first attempt (idempotentId)', () => {
    const KEYED = { requested: true };

    it('when the first attempt made the quote, then the retry answers with that quote and its number, and takes none', async () => {
      const first = draft();
      const made = await allocator().create(first, 'a', KEYED);
      const retried = await allocator().create({ ...first, at: first.at + 5_000 }, 'a', KEYED);
      expect(retried).toEqual(made);
      expect((await allocator().create(draft(), 'a')).quoteNumber).toBe('Q-2026-000002');
      expect(await events.readStream(quoteNumberStream('org_1', 2026))).toHaveLength(2);
    });

    it('when the first attempt stopped after taking a number, then the retry completes that quote with that number, and takes none', async () => {
      const first = draft();
      await reserveWithoutQuote(first, 1);
      expect(await allocator().create({ ...first, at: first.at + 5_000 }, 'a', KEYED)).toEqual({ quoteId: first.quoteId, quoteNumber: 'Q-2026-000001' });
      expect(await numberOf(first.quoteId)).toBe('Q-2026-000001');
      expect(await events.readStream(quoteNumberStream('org_1', 2026))).toHaveLength(1);
      expect((await allocator().create(draft(), 'a')).quoteNumber).toBe('Q-2026-000002');
    });

    it("when the id is another organization's quote, then it is refused and no number is taken", async () => {
      const first = draft('org_1');
      await allocator().create(first, 'a', KEYED);
      await expect(allocator().create({ ...draft('org_2'), quoteId: first.quoteId }, 'a', KEYED)).rejects.toMatchObject({ code: 'conflict' });
      expect(await events.readStream(quoteNumberStream('org_2', 2026))).toHaveLength(0);
    });
  });

  it('given interrupted creations, then the start-up recovery completes them once and remembers how far it got', async () => {
    const [a, b] = [draft('org_1'), draft('org_2')];
    await reserveWithoutQuote(a, 1);
    await reserveWithoutQuote(b, 1);
    const numbers = allocator();
    expect(await numbers.recoverAll()).toBe(2);
    expect([await numberOf(a.quoteId), await numberOf(b.quoteId)]).toEqual(['Q-2026-000001', 'Q-2026-000001']);
    expect(await numbers.recoverAll()).toBe(0);
    expect(await events.readStream(quoteStream(a.quoteId))).toHaveLength(1);
  });

  it('given processes recovering the same interrupted creation at once, then the quote is created and its submission marked once', async () => {
    const slow = draft();
    await reserveWithoutQuote(slow, 1);
    const recovered = await Promise.all([allocator().recoverAll(), allocator().recoverAll(), allocator().create(draft(), 'a')]);
    expect(await events.readStream(quoteStream(slow.quoteId))).toHaveLength(1);
    expect(recovered.slice(0, 2).reduce((sum: number, n) => sum + (n as number), 0)).toBeLessThanOrEqual(1);
    expect(dispatched.filter((c) => c.submissionId === slow.submissionId)).toHaveLength(1);
  });

  it('given a long counter stream and a fresh process, then it finds the newest number without reading them all', async () => {
    const first = allocator();
    for (let i = 0; i < 37; i++) await first.create(draft(), 'a');
    const original = events.readStream.bind(events);
    let counterEventsRead = 0;
    jest.spyOn(events, 'readStream').mockImplementation(async (stream, options) => {
      const read = await original(stream, options);
      if (stream === quoteNumberStream('org_1', 2026)) counterEventsRead += read.length;
      return read;
    });
    expect((await allocator().create(draft(), 'a')).quoteNumber).toBe('Q-2026-000038');
    expect(counterEventsRead).toBeLessThan(20);
  });
});
