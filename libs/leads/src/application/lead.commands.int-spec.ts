import { AggregateRepository, ReadYourWrites } from '@lib/event-sourcing';
import { SqliteEventStore } from '@lib/event-store';
import { IdGenerator, ManualClock, REQUEST_RETRY_WINDOW_MS } from '@lib/shared';
import { leadStream } from '../domain/lead.events';
import { SubmitLead, SubmitLeadHandler } from './lead.commands';

class CountingIds extends IdGenerator {
  private n = 0;
  next(prefix: string): string {
    return `${prefix}_${String(++this.n).padStart(24, '0')}`;
  }
}

describe('SubmitLead with the id of a keyed request (idempotentId)', () => {
  let events: SqliteEventStore;
  let clock: ManualClock;
  let handler: SubmitLeadHandler;
  const requested = `lead_${'R'.repeat(24)}`;
  const enquiry = { name: 'Ada', email: 'ada@example.com', phone: null, message: 'Three windows?' };

  beforeEach(() => {
    events = new SqliteEventStore({ file: ':memory:' });
    clock = new ManualClock();
    handler = new SubmitLeadHandler(new AggregateRepository(events, new ReadYourWrites()), new CountingIds(), clock);
  });
  afterEach(() => events.close());

  it('given a retry within a day of the first attempt, then it answers with the lead that attempt made and makes none', async () => {
    expect(await handler.execute(new SubmitLead('org_1', enquiry, 'storefront', requested))).toBe(requested);
    clock.advance(REQUEST_RETRY_WINDOW_MS - 1);
    expect(await handler.execute(new SubmitLead('org_1', enquiry, 'storefront', requested))).toBe(requested);
    expect(await events.readStream(leadStream(requested))).toHaveLength(1);
  });

  it('given the same request a day later, then it is a new one: a new lead under a new id', async () => {
    await handler.execute(new SubmitLead('org_1', enquiry, 'storefront', requested));
    clock.advance(REQUEST_RETRY_WINDOW_MS);
    const later = await handler.execute(new SubmitLead('org_1', enquiry, 'storefront', requested));
    expect(later).not.toBe(requested);
    expect(await events.readStream(leadStream(later))).toHaveLength(1);
    expect(await events.readStream(leadStream(requested))).toHaveLength(1);
  });
});
