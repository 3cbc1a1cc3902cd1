import { SqliteEventStore } from '@lib/event-store';
import type { OrganizationDirectory } from '@lib/organizations';
import { IdGenerator, ManualClock, REQUEST_RETRY_WINDOW_MS } from '@lib/shared';
import type { SubmissionLookup, SubmissionView } from '@lib/submissions';
import type { QuoteDraft } from '../domain/quote.decider';
import { quoteStream, type QuoteCreated } from '../domain/quote.events';
import { CreateQuote, CreateQuoteHandler } from './quote.commands';
import type { QuoteNumberAllocator } from './quote-number-allocator';

describe('CreateQuote with the id of a keyed request (idempotentId)', () => {
  let events: SqliteEventStore;
  let clock: ManualClock;
  let drafts: QuoteDraft[];
  let handler: CreateQuoteHandler;
  const requested = `quo_${'R'.repeat(24)}`;
  const submission = { id: 'sub_1', organizationId: 'org_1', customer: { name: 'Ada', email: 'ada@example.com' }, locale: 'en', basePricing: { lineItems: [], subtotal: 0 }, externalPricing: null, configHash: 'h' } as unknown as SubmissionView;

  /** What the first attempt left: the quote's created event, at `at`. */
  async function createdAt(at: number): Promise<void> {
    const created = { type: 'quote.v1.created', data: { organizationId: 'org_1', quoteId: requested, at } } as unknown as QuoteCreated;
    await events.appendToStream(quoteStream(requested), [{ ...created, metadata: { actor: 'apiKey:key_1' } }], 'no_stream');
  }

  beforeEach(() => {
    events = new SqliteEventStore({ file: ':memory:' });
    clock = new ManualClock();
    drafts = [];
    const allocator = { create: async (draft: QuoteDraft) => (drafts.push(draft), { quoteId: draft.quoteId, quoteNumber: 'Q-2026-000001' }) } as unknown as QuoteNumberAllocator;
    const organizations = { get: async () => ({ locale: 'en', currency: 'EUR', settings: { quoteDefaults: { taxRate: 21, validityDays: 30 } } }) } as unknown as OrganizationDirectory;
    const submissions = { find: async () => submission } as unknown as SubmissionLookup;
    const ids = { next: (prefix: string) => `${prefix}_${'N'.repeat(24)}` } as IdGenerator;
    handler = new CreateQuoteHandler(submissions, organizations, allocator, events, ids, clock);
  });
  afterEach(() => events.close());

  const create = () => handler.execute(new CreateQuote('org_1', 'sub_1', { lineItems: [{ description: 'Window', quantity: 1, unitPrice: 100 }] } as never, 'apiKey:key_1', requested));

  it('given no quote under the id, then the quote takes it', async () => {
    expect(await create()).toBe(requested);
  });

  it('given the quote the first attempt made less than a day ago, then the retry asks for it again (the allocator answers with it)', async () => {
    await createdAt(clock.now());
    clock.advance(REQUEST_RETRY_WINDOW_MS - 1);
    expect(await create()).toBe(requested);
  });

  it('given a quote made under the id a day ago or more, then it is the same request made again: a new quote under a new id', async () => {
    await createdAt(clock.now());
    clock.advance(REQUEST_RETRY_WINDOW_MS);
    expect(await create()).toBe(`quo_${'N'.repeat(24)}`);
    expect(drafts.map((draft) => draft.quoteId)).toEqual([`quo_${'N'.repeat(24)}`]);
  });
});
