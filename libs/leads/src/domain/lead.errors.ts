import { ConcurrentModification, NotFound, ValidationFailed } from '@lib/shared';
import type { LeadStatus } from './lead.events';

/** Unknown lead, or a lead of another organization (never 403). */
export class LeadNotFound extends NotFound {
  constructor() {
    super('Lead');
  }
}

/** A lead moves new → contacted → closed, never back and never to the status it has. */
export class LeadStatusNotForward extends ValidationFailed {
  constructor(from: LeadStatus, to: LeadStatus) {
    super(
      [{ path: 'status', message: from === to ? `the lead is already ${to}` : `a lead cannot move back from ${from} to ${to}; it only moves new → contacted → closed` }],
      'The lead status can only move forward.',
    );
  }
}

/** A lead id is minted once; a second create on its stream is a programming or replay error. */
export class LeadAlreadyExists extends ConcurrentModification {
  constructor() {
    super('The lead');
  }
}
