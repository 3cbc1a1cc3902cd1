import { applyEvent } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import { createdData } from '../testing/submission.fixture';
import type { SubmissionEvent } from '../domain/submission.events';
import { SUBMISSIONS, submissionsProjection, type SubmissionDocument } from './submissions.projection';

const ids = { organizationId: 'org_a', submissionId: 'sub_1' };
const events: SubmissionEvent[] = [
  { type: 'submission.v1.created', data: createdData },
  { type: 'submission.v1.quoteRecorded', data: { ...ids, quoteId: 'quo_1', at: 2_000 } },
  { type: 'submission.v1.statusChanged', data: { ...ids, from: 'new', to: 'quoted', cause: 'quoteCreated', quoteId: 'quo_1', at: 2_000 } },
  { type: 'submission.v1.quoteRecorded', data: { ...ids, quoteId: 'quo_2', at: 2_500 } },
  { type: 'submission.v1.externalRefChanged', data: { ...ids, externalRef: 'crm:deal:42', at: 3_000 } },
];

const recorded = (event: SubmissionEvent, position: number): RecordedEvent => ({
  id: `e${position}`, streamId: 'submission-sub_1', type: event.type, data: event.data, metadata: {}, revision: position - 1, position, recordedAt: event.data.at,
});

describe('submissions projection', () => {
  let store: SqliteReadStore;
  beforeEach(() => (store = new SqliteReadStore({ file: ':memory:' })));
  afterEach(() => store.close());

  it('given a created submission, then the list fields are derived from its configuration', async () => {
    await applyEvent(store, submissionsProjection, recorded(events[0], 1));
    expect(await store.get<SubmissionDocument>(SUBMISSIONS, 'sub_1')).toMatchObject({
      id: 'sub_1', status: 'new', dimensions: { width: 1200, height: 1400 }, unitAmount: 1, latestQuoteId: null, externalRef: null, createdAt: 1_000,
    });
  });

  it('given quotes and an externalRef, then the newest quote is the latest one', async () => {
    for (const [i, event] of events.entries()) await applyEvent(store, submissionsProjection, recorded(event, i + 1));
    expect(await store.get<SubmissionDocument>(SUBMISSIONS, 'sub_1')).toMatchObject({ status: 'quoted', latestQuoteId: 'quo_2', externalRef: 'crm:deal:42', updatedAt: 3_000 });
  });

  it('given every event applied twice, then the document is the same as after applying each once', async () => {
    for (const [i, event] of events.entries()) await applyEvent(store, submissionsProjection, recorded(event, i + 1));
    const once = await store.get(SUBMISSIONS, 'sub_1');
    for (const [i, event] of events.entries()) expect(await applyEvent(store, submissionsProjection, recorded(event, i + 1))).toBe(0);
    expect(await store.get(SUBMISSIONS, 'sub_1')).toEqual(once);
  });
  it('given a late live price, then it becomes the external pricing; an auto-fill request changes nothing shown', async () => {
    const externalPricing = { configHash: createdData.configHash, lineItems: [], subtotal: 900, receivedAt: 3_500 };
    await applyEvent(store, submissionsProjection, recorded(events[0], 1));
    await applyEvent(store, submissionsProjection, recorded({ type: 'submission.v1.externalPricingFrozen', data: { ...ids, externalPricing, at: 3_600 } }, 2));
    await applyEvent(store, submissionsProjection, recorded({ type: 'submission.v1.autofillRequested', data: { ...ids, at: 4_000 } }, 3));
    expect(await store.get<SubmissionDocument>(SUBMISSIONS, 'sub_1')).toMatchObject({ externalPricing, updatedAt: 3_600 });
  });
});
