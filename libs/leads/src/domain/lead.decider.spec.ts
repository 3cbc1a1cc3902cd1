import { fold } from '@lib/event-sourcing';
import { leadDecider, type LeadCommand } from './lead.decider';
import { LeadAlreadyExists, LeadNotFound, LeadStatusNotForward } from './lead.errors';
import type { LeadEvent, LeadStatus } from './lead.events';

const ORG = 'org_1';
const LEAD = 'lead_1';
const T0 = Date.UTC(2026, 0, 1);
const T1 = T0 + 60_000;

/** given events, when a command, then these events (or this error). */
function given(...history: LeadEvent[]) {
  const state = fold(leadDecider, history);
  return {
    when: (command: LeadCommand) => ({
      then: (...expected: LeadEvent[]) => expect(leadDecider.decide(command, state)).toEqual(expected),
      thenThrows: (error: new (...args: never[]) => Error, message?: RegExp) => {
        let thrown: unknown;
        try {
          leadDecider.decide(command, state);
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(error);
        if (message) expect(JSON.stringify((thrown as { details?: unknown }).details)).toMatch(message);
      },
    }),
  };
}

const enquiry = { name: 'Jane Doe', email: 'Jane@Example.com', phone: null, message: 'Please call me about six windows.' };
const created: LeadEvent = { type: 'lead.v1.created', data: { organizationId: ORG, leadId: LEAD, ...enquiry, createdAt: T0 } };
const moved = (from: LeadStatus, to: LeadStatus, at = T1): LeadEvent => ({ type: 'lead.v1.statusChanged', data: { organizationId: ORG, leadId: LEAD, from, to, at } });
const changeStatus = (status: LeadStatus, organizationId = ORG): LeadCommand => ({ type: 'changeLeadStatus', organizationId, status, at: T1 });

describe('lead decider', () => {
  describe('create', () => {
    it('given nothing, when a lead is created, then it carries everything the lead.created webhook needs', () => {
      given().when({ type: 'createLead', organizationId: ORG, leadId: LEAD, enquiry, at: T0 }).then(created);
    });

    it('given a lead, when it is created again (the retry of the keyed request that made it), then nothing more happens', () => {
      given(created).when({ type: 'createLead', organizationId: ORG, leadId: LEAD, enquiry, at: T1 }).then();
    });

    it("given a lead, when another organization creates one with its id, then that is refused", () => {
      given(created).when({ type: 'createLead', organizationId: 'org_other', leadId: LEAD, enquiry, at: T1 }).thenThrows(LeadAlreadyExists);
    });
  });

  describe('status', () => {
    it.each([
      ['new → contacted', [created], 'contacted', moved('new', 'contacted')],
      ['contacted → closed', [created, moved('new', 'contacted', T0)], 'closed', moved('contacted', 'closed')],
      ['new → closed', [created], 'closed', moved('new', 'closed')],
    ] as Array<[string, LeadEvent[], LeadStatus, LeadEvent]>)('given a lead, when moved forward (%s), then the move is recorded', (_label, history, status, event) => {
      given(...history).when(changeStatus(status)).then(event);
    });

    it.each([
      ['contacted → new', [created, moved('new', 'contacted', T0)], 'new', /cannot move back from contacted to new/],
      ['closed → contacted', [created, moved('new', 'closed', T0)], 'contacted', /cannot move back from closed to contacted/],
      ['new → new', [created], 'new', /already new/],
      ['closed → closed', [created, moved('new', 'closed', T0)], 'closed', /already closed/],
    ] as Array<[string, LeadEvent[], LeadStatus, RegExp]>)('given a lead, when moved back or to its own status (%s), then it is refused', (_label, history, status, message) => {
      given(...history).when(changeStatus(status)).thenThrows(LeadStatusNotForward, message);
    });

    it('given no lead, when its status is changed, then it is not found', () => {
      given().when(changeStatus('contacted')).thenThrows(LeadNotFound);
    });

    it('given a lead of another organization, when its status is changed, then it is not found', () => {
      given(created).when(changeStatus('contacted', 'org_2')).thenThrows(LeadNotFound);
    });
  });
});
