import { fold } from '@lib/event-sourcing';
import { NotFound, REQUEST_RETRY_WINDOW_MS } from '@lib/shared';
import { ExternalPricingForAnotherConfiguration } from './submission.errors';
import { createdData } from '../testing/submission.fixture';
import { submissionDecider, type SubmissionCommand } from './submission.decider';
import type { SubmissionEvent } from './submission.events';

const ids = { organizationId: 'org_a', submissionId: 'sub_1' };
const created: SubmissionEvent = { type: 'submission.v1.created', data: createdData };

function when(given: SubmissionEvent[], command: SubmissionCommand): SubmissionEvent[] {
  return submissionDecider.decide(command, fold(submissionDecider, given));
}

const markQuoted = (quoteId: string, at = 2_000): SubmissionCommand => ({ type: 'markQuoted', organizationId: 'org_a', quoteId, at });
const quoteRecorded = (quoteId: string, at = 2_000): SubmissionEvent => ({ type: 'submission.v1.quoteRecorded', data: { ...ids, quoteId, at } });
const statusChanged = (from: 'new' | 'quoted' | 'closed', to: 'new' | 'quoted' | 'closed', cause: 'api' | 'quoteCreated' | 'quoteAccepted', quoteId: string | null, at: number): SubmissionEvent => ({
  type: 'submission.v1.statusChanged', data: { ...ids, from, to, cause, quoteId, at },
});

describe('submission decider', () => {
  describe('given no submission', () => {
    it('when it is created, then submission.v1.created carries the whole record', () => {
      expect(when([], { type: 'createSubmission', ...createdData })).toEqual([created]);
    });

    it('when it is updated, marked quoted or closed, then it is not found', () => {
      expect(() => when([], { type: 'updateSubmission', organizationId: 'org_a', status: 'closed', at: 2_000 })).toThrow(NotFound);
      expect(() => when([], markQuoted('quo_1'))).toThrow(NotFound);
      expect(() => when([], { type: 'closeOnAcceptance', organizationId: 'org_a', quoteId: 'quo_1', at: 2_000 })).toThrow(NotFound);
    });
  });

  describe('given a new submission', () => {
    it('when it is created again with the same id, then the retry changes nothing', () => {
      expect(when([created], { type: 'createSubmission', ...createdData })).toEqual([]);
    });

    it('when its first quote is recorded, then the quote becomes the latest and the status moves to quoted', () => {
      expect(when([created], markQuoted('quo_1'))).toEqual([quoteRecorded('quo_1'), statusChanged('new', 'quoted', 'quoteCreated', 'quo_1', 2_000)]);
    });

    it('when another organization changes it, then it is not found', () => {
      expect(() => when([created], { type: 'updateSubmission', organizationId: 'org_b', status: 'closed', at: 2_000 })).toThrow(NotFound);
      expect(() => when([created], { ...markQuoted('quo_1'), organizationId: 'org_b' })).toThrow(NotFound);
    });

    it('when the API sets a status and an externalRef, then both are recorded', () => {
      expect(when([created], { type: 'updateSubmission', organizationId: 'org_a', status: 'closed', externalRef: 'crm:deal:42', at: 2_000 })).toEqual([
        statusChanged('new', 'closed', 'api', null, 2_000),
        { type: 'submission.v1.externalRefChanged', data: { ...ids, externalRef: 'crm:deal:42', at: 2_000 } },
      ]);
    });

    it('when the API sets what is already there, then nothing is recorded', () => {
      expect(when([created], { type: 'updateSubmission', organizationId: 'org_a', status: 'new', externalRef: null, at: 2_000 })).toEqual([]);
    });

    it('when an accepted quote closes it, then the status moves to closed', () => {
      expect(when([created], { type: 'closeOnAcceptance', organizationId: 'org_a', quoteId: 'quo_1', at: 3_000 })).toEqual([
        statusChanged('new', 'closed', 'quoteAccepted', 'quo_1', 3_000),
      ]);
    });
  });

  describe('given a quoted submission', () => {
    const quoted = [created, quoteRecorded('quo_1'), statusChanged('new', 'quoted', 'quoteCreated', 'quo_1', 2_000)];

    it('when the same quote is recorded again, then nothing happens', () => {
      expect(when(quoted, markQuoted('quo_1', 2_500))).toEqual([]);
    });

    it('when a second quote is recorded, then it becomes the latest and the status stays', () => {
      expect(when(quoted, markQuoted('quo_2', 2_500))).toEqual([quoteRecorded('quo_2', 2_500)]);
    });

    it('when the API set it back to new and another quote is recorded, then only the first quote had moved the status', () => {
      const reset = [...quoted, statusChanged('quoted', 'new', 'api', null, 2_200)];
      expect(when(reset, markQuoted('quo_2', 2_500))).toEqual([quoteRecorded('quo_2', 2_500)]);
    });

    it('when the externalRef is cleared after being set, then null is recorded', () => {
      const withRef = [...quoted, { type: 'submission.v1.externalRefChanged', data: { ...ids, externalRef: 'crm:deal:42', at: 2_100 } } as SubmissionEvent];
      expect(when(withRef, { type: 'updateSubmission', organizationId: 'org_a', externalRef: null, at: 2_500 })).toEqual([
        { type: 'submission.v1.externalRefChanged', data: { ...ids, externalRef: null, at: 2_500 } },
      ]);
    });
  });

  describe('given a closed submission', () => {
    const closed = [created, statusChanged('new', 'closed', 'quoteAccepted', 'quo_1', 3_000)];

    it('when an accepted quote closes it again, then nothing happens', () => {
      expect(when(closed, { type: 'closeOnAcceptance', organizationId: 'org_a', quoteId: 'quo_1', at: 3_500 })).toEqual([]);
    });

    it('when its first quote is recorded, then the quote is the latest but the status stays closed', () => {
      expect(when(closed, markQuoted('quo_9', 3_500))).toEqual([quoteRecorded('quo_9', 3_500)]);
    });
  });

  describe('given a quote acceptance closed it and the API reopened it', () => {
    const closeOnAcceptance = (quoteId: string, at: number): SubmissionCommand => ({ type: 'closeOnAcceptance', organizationId: 'org_a', quoteId, at });
    const reopened = [
      created,
      quoteRecorded('quo_1'),
      statusChanged('new', 'quoted', 'quoteCreated', 'quo_1', 2_000),
      statusChanged('quoted', 'closed', 'quoteAccepted', 'quo_1', 3_000),
      statusChanged('closed', 'quoted', 'api', null, 3_100),
    ];

    it('when the same acceptance is delivered again, late, then the reopened status stays', () => {
      expect(when(reopened, closeOnAcceptance('quo_1', 3_500))).toEqual([]);
    });

    it("when another quote's acceptance arrives, then it closes the submission", () => {
      expect(when(reopened, closeOnAcceptance('quo_2', 3_500))).toEqual([statusChanged('quoted', 'closed', 'quoteAccepted', 'quo_2', 3_500)]);
    });

    it('when a stored stream already holds a second close for the same acceptance and the API reopened it again, then that acceptance closes nothing any more', () => {
      const closedTwice = [...reopened, statusChanged('quoted', 'closed', 'quoteAccepted', 'quo_1', 3_200), statusChanged('closed', 'new', 'api', null, 3_300)];
      expect(when(closedTwice, closeOnAcceptance('quo_1', 3_500))).toEqual([]);
    });
  });

  describe('given a submission and a live price for it', () => {
    const pricing = (subtotal: number, receivedAt: number, configHash = createdData.configHash) => ({
      configHash, subtotal, receivedAt, lineItems: [{ description: 'All in', quantity: 1, unitPrice: subtotal, total: subtotal, itemType: 'other' }],
    });
    const freeze = (externalPricing: ReturnType<typeof pricing>, at = 5_000): SubmissionCommand => ({ type: 'freezeExternalPricing', organizationId: 'org_a', externalPricing, at });
    const frozen = (externalPricing: ReturnType<typeof pricing>, at = 5_000): SubmissionEvent => ({ type: 'submission.v1.externalPricingFrozen', data: { ...ids, externalPricing, at } });

    it('when an answer for the submitted configuration arrives, then it is frozen', () => {
      expect(when([created], freeze(pricing(900, 4_000)))).toEqual([frozen(pricing(900, 4_000))]);
    });
    it('when an answer for another configuration arrives, then it is refused as stale and names the submitted hash', () => {
      expect(() => when([created], freeze(pricing(900, 4_000, 'sha256:other')))).toThrow(ExternalPricingForAnotherConfiguration);
    });
    it('when the same answer comes again, or an older one is replayed late, then nothing changes; a newer one replaces it', () => {
      const given = [created, frozen(pricing(900, 4_000))];
      expect(when(given, freeze(pricing(900, 4_000)))).toEqual([]);
      expect(when(given, freeze(pricing(900, 4_800)))).toEqual([]); // the partner PUT the same answer again
      expect(when(given, freeze(pricing(800, 3_500)))).toEqual([]);
      expect(when(given, freeze(pricing(950, 4_500), 6_000))).toEqual([frozen(pricing(950, 4_500), 6_000)]);
    });
    it('when the pricing was frozen at submit, then a later answer replaces it', () => {
      const atSubmit = { type: 'submission.v1.created', data: { ...createdData, externalPricing: pricing(700, 900) } } as SubmissionEvent;
      expect(when([atSubmit], freeze(pricing(750, 4_000)))).toHaveLength(1);
      expect(when([atSubmit], freeze(pricing(700, 900)))).toEqual([]);
    });
    it('when an auto-fill is requested, then each request is recorded; another organization gets not found', () => {
      const request: SubmissionCommand = { type: 'requestAutofill', organizationId: 'org_a', at: 6_000 };
      const requested: SubmissionEvent = { type: 'submission.v1.autofillRequested', data: { ...ids, at: 6_000 } };
      expect(when([created], request)).toEqual([requested]);
      expect(when([created, requested], request)).toEqual([requested]);
      expect(() => when([created], { ...request, organizationId: 'org_b' })).toThrow(NotFound);
    });
    it('when a keyed auto-fill is requested again within a day (its answer lost), then nothing more; after a day, or under another key, it is recorded', () => {
      const keyed: SubmissionCommand = { type: 'requestAutofill', organizationId: 'org_a', request: 'autofill_1', at: 6_000 };
      const requested: SubmissionEvent = { type: 'submission.v1.autofillRequested', data: { ...ids, at: 6_000, request: 'autofill_1' } };
      expect(when([created], keyed)).toEqual([requested]);
      expect(when([created, requested], { ...keyed, at: 6_000 + REQUEST_RETRY_WINDOW_MS - 1 })).toEqual([]);
      expect(when([created, requested], { ...keyed, at: 6_000 + REQUEST_RETRY_WINDOW_MS })).toHaveLength(1);
      expect(when([created, requested], { ...keyed, request: 'autofill_2' })).toHaveLength(1);
    });
  });
});
