import { DomainError, ValidationFailed } from '@lib/shared';

/** decisions §7: a session idle past SESSION_IDLE_TTL_MS still reads, but every write is refused. */
export class SessionExpired extends DomainError {
  readonly code = 'session_expired';
  constructor() {
    super('The configuration session has expired; start a new one.');
  }
}

export class SessionAlreadySubmitted extends DomainError {
  readonly code = 'conflict';
  constructor(submissionId: string) {
    super('The configuration session was already submitted; it can no longer be changed.', { submissionId });
  }
}

export class SessionNotConfigured extends ValidationFailed {
  constructor() {
    super([{ path: 'configuration', message: 'the product has not been configured yet; save a configuration before submitting' }]);
  }
}

/** api-v1: an adjustment for a hash that is no longer current; `details.currentConfigHash` holds the current one. */
export class StaleConfigHash extends DomainError {
  readonly code = 'stale_config_hash';
  constructor(currentConfigHash: string | null) {
    super('The configuration has changed since this price was requested.', { currentConfigHash });
  }
}
