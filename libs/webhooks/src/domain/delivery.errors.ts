import { DomainError, NotFound } from '@lib/shared';

export class AlreadyInFlight extends DomainError {
  readonly code = 'already_in_flight';
  constructor() {
    super('The delivery is pending or being attempted; redeliver it once it has been delivered or has failed.');
  }
}

export class DeliveryNotFound extends NotFound {
  constructor() {
    super('Event');
  }
}
