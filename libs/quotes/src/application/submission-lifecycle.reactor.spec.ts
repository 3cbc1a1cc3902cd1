import type { CommandBus } from '@nestjs/cqrs';
import type { RecordedEvent } from '@lib/event-store';
import { CloseSubmissionOnAcceptance, MarkSubmissionQuoted } from '@lib/submissions';
import { SubmissionLifecycleReactor } from './submission-lifecycle.reactor';

const recorded = (type: string, data: Record<string, unknown>): RecordedEvent => ({
  id: 'e1', streamId: 'quote-q1', type, data, metadata: { actor: 'apiKey:key_1' }, revision: 0, position: 1, recordedAt: 0,
});

describe('SubmissionLifecycleReactor', () => {
  const dispatched: unknown[] = [];
  const reactor = new SubmissionLifecycleReactor({ execute: async (c: unknown) => void dispatched.push(c) } as unknown as CommandBus);
  beforeEach(() => (dispatched.length = 0));

  it('marks the submission quoted when a quote is created', async () => {
    await reactor.react(recorded('quote.v1.created', { organizationId: 'org_1', quoteId: 'q1', submissionId: 's1' }));
    expect(dispatched).toEqual([new MarkSubmissionQuoted('org_1', 's1', 'q1', 'apiKey:key_1')]);
  });

  it('closes the submission when its quote is accepted', async () => {
    await reactor.react(recorded('quote.v1.accepted', { organizationId: 'org_1', quoteId: 'q1', submission: { id: 's1' } }));
    expect(dispatched).toEqual([new CloseSubmissionOnAcceptance('org_1', 's1', 'q1', 'apiKey:key_1')]);
  });

  it('leaves the submission alone on a rejection', async () => {
    await reactor.react(recorded('quote.v1.rejected', { organizationId: 'org_1', quoteId: 'q1', submission: { id: 's1' } }));
    expect(dispatched).toEqual([]);
  });
});
