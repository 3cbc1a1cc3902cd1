import { DomainError, Unauthorized } from '@lib/shared';

/** decisions §8 step 1: one answer for an unknown, forged, malformed or superseded token, so none can be told apart. */
export class InvalidCapabilityToken extends Unauthorized {
  constructor() {
    super('This capability URL is not valid: it is unknown, malformed, or was replaced by a redelivery of its pricing event.');
  }
}

/** api-v1 Limits: a token may write only within its window after the event. */
export class WindowExpired extends DomainError {
  readonly code = 'window_expired';
  constructor(expiresAt: number) {
    super('The write window of this capability URL has ended; answer the newest pricing.calculated event instead.', { expiresAt });
  }
}
