import type { Decider } from '@lib/event-sourcing';
import { LeadAlreadyExists, LeadNotFound, LeadStatusNotForward } from './lead.errors';
import { LEAD_STATUSES, type LeadEnquiry, type LeadEvent, type LeadStatus } from './lead.events';

export interface LeadState {
  exists: boolean;
  organizationId: string | null;
  leadId: string | null;
  status: LeadStatus;
  createdAt: number | null;
}

export type LeadCommand =
  | { type: 'createLead'; organizationId: string; leadId: string; enquiry: LeadEnquiry; at: number }
  /** organizationId is the caller's: a lead of another organization is not found */
  | { type: 'changeLeadStatus'; organizationId: string; status: LeadStatus; at: number };

const initialState = (): LeadState => ({ exists: false, organizationId: null, leadId: null, status: 'new', createdAt: null });

const rank = (status: LeadStatus) => LEAD_STATUSES.indexOf(status);

function decide(command: LeadCommand, state: LeadState): LeadEvent[] {
  switch (command.type) {
    case 'createLead': {
      // The same lead again: a retry of the keyed request that made it (its id is the request's).
      if (state.exists) {
        if (state.organizationId === command.organizationId) return [];
        throw new LeadAlreadyExists();
      }
      const { organizationId, leadId, enquiry, at } = command;
      return [{ type: 'lead.v1.created', data: { organizationId, leadId, ...enquiry, createdAt: at } }];
    }
    case 'changeLeadStatus': {
      if (!state.exists || state.organizationId !== command.organizationId) throw new LeadNotFound();
      if (rank(command.status) <= rank(state.status)) throw new LeadStatusNotForward(state.status, command.status);
      return [
        {
          type: 'lead.v1.statusChanged',
          data: { organizationId: state.organizationId, leadId: state.leadId!, from: state.status, to: command.status, at: command.at },
        },
      ];
    }
  }
}

function evolve(state: LeadState, event: LeadEvent): LeadState {
  switch (event.type) {
    case 'lead.v1.created':
      return { exists: true, organizationId: event.data.organizationId, leadId: event.data.leadId, status: 'new', createdAt: event.data.createdAt };
    case 'lead.v1.statusChanged':
      return { ...state, status: event.data.to };
  }
}

export const leadDecider: Decider<LeadState, LeadCommand, LeadEvent> = { initialState, decide, evolve };
