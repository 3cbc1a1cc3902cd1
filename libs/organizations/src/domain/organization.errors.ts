import { DomainError, ForbiddenPlan } from '@lib/shared';

export class SlugTaken extends DomainError {
  readonly code = 'validation_error';
  constructor(slug: string) {
    super('The request is invalid.', { fields: [{ path: 'slug', message: `slug "${slug}" is already in use` }] });
  }
}

export class ApiKeyLimitReached extends DomainError {
  readonly code = 'validation_error';
  constructor(max: number) {
    super('The request is invalid.', { fields: [{ path: '', message: `an organization can have at most ${max} active API keys` }] });
  }
}

export class PlanWithoutApiAccess extends ForbiddenPlan {
  constructor() {
    super('API keys need the Pro plan or higher.');
  }
}
