/**
 * Domain errors: one class per rule, each with the stable machine-readable code of the API's
 * error envelope. The HTTP layer maps codes to statuses in one place (libs/http).
 */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  constructor(
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export interface FieldError {
  path: string;
  message: string;
}

/** The most refusals one 422 lists: a body of 50,000 bad items was answered with 3.7 MB of them (a review, 2026-11-27). */
export const MAX_LISTED_FIELD_ERRORS = 100;

/** `fields` up to MAX_LISTED_FIELD_ERRORS, then one entry saying how many more there are. */
function atMostListed(fields: FieldError[]): FieldError[] {
  if (fields.length <= MAX_LISTED_FIELD_ERRORS) return fields;
  const more = fields.length - MAX_LISTED_FIELD_ERRORS;
  return [...fields.slice(0, MAX_LISTED_FIELD_ERRORS), { path: '', message: `and ${more} more ${more === 1 ? 'refusal' : 'refusals'} of this request, not listed` }];
}

export class ValidationFailed extends DomainError {
  readonly code = 'validation_error';
  /** every refusal; the answer's `details.fields` lists MAX_LISTED_FIELD_ERRORS of them at most */
  constructor(readonly fields: FieldError[], message = 'The request is invalid.') {
    super(message, { fields: atMostListed(fields) });
  }

  /** The same refusal for a request that holds the checked object under `base` (`configuration`). */
  under(base: string): ValidationFailed {
    return new ValidationFailed(
      this.fields.map(({ path, message }) => ({ path: path ? `${base}.${path}` : base, message })),
      this.message,
    );
  }
}

export class NotFound extends DomainError {
  readonly code = 'not_found';
  constructor(what = 'Resource') {
    super(`${what} not found.`);
  }
}

/** An optimistic-concurrency conflict that survived the retries. */
export class ConcurrentModification extends DomainError {
  readonly code = 'conflict';
  constructor(what: string) {
    super(`${what} was changed concurrently; retry the request.`);
  }
}

export class PreconditionFailed extends DomainError {
  readonly code = 'precondition_failed';
  constructor(readonly currentETag: string) {
    super('The resource has changed since it was read (If-Match does not match).', { currentETag });
  }
}

export class Unauthorized extends DomainError {
  readonly code = 'unauthorized';
  constructor(message = 'Authentication failed.') {
    super(message);
  }
}

export class ForbiddenPlan extends DomainError {
  readonly code = 'forbidden_plan';
  constructor(message = 'The organization plan does not include this feature.') {
    super(message);
  }
}

export class ReadOnlyKey extends DomainError {
  readonly code = 'read_only_key';
  constructor() {
    super('This API key is read-only.');
  }
}

/** A limit of the product's own, beside the request rates of libs/http: 429 with `Retry-After`. */
export class RateLimited extends DomainError {
  readonly code = 'rate_limited';
  constructor(message: string, readonly retryAfterSeconds: number) {
    super(message);
  }
}

export class Unavailable extends DomainError {
  readonly code = 'unavailable';
  constructor(message = 'A backing service is unavailable; retry shortly.', details?: Record<string, unknown>) {
    super(message, details);
  }
}

/**
 * The write is stored, but the read side did not show it in time (read-your-writes). Unlike any
 * other 503 this is an outcome: `details.writeStored` says so, and an `Idempotency-Key` keeps
 * and replays it, so a retry never makes the write a second time.
 */
export class WriteStoredNotYetVisible extends Unavailable {
  /** `made`: the ids of what the write created, when the caller knows them (a quote's id and number) */
  constructor(made: Record<string, string> = {}) {
    super('The write was stored but the read side is lagging; it will appear shortly. Do not make it again.', { writeStored: true, ...made });
  }
}

/**
 * Requests answered `503 unavailable` because a store refused or could not be reached, with the
 * store's error code (`SQLITE_FULL`, `ENOSPC`, `MongoNetworkError`…): the HTTP layer marks them
 * as it answers, and the metrics count them (`store_unavailable_answers_total`). Kept beside the
 * request, not on it, so that neither library needs the other's types.
 */
const storeRefusals = new WeakMap<object, string>();

export const StoreRefusals = {
  mark(request: object, code: string): void {
    storeRefusals.set(request, code);
  },
  of(request: object): string | undefined {
    return storeRefusals.get(request);
  },
};
