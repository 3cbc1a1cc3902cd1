import { DomainError, NotFound } from '@lib/shared';
import type { QuoteStatus } from './quote.events';

export class QuoteNotFound extends NotFound {
  constructor() {
    super('Quote');
  }
}

/** api-v1: term or line-item changes on an accepted, rejected or expired quote. */
export class QuoteNotEditable extends DomainError {
  readonly code = 'quote_not_editable';
  constructor(status: QuoteStatus) {
    super(`The quote is ${status} and can no longer be changed.`, { status });
  }
}

/** decisions §3: a change to a sent or viewed quote needs `revise: true`; nothing was applied. */
export class RevisionRequired extends DomainError {
  readonly code = 'revision_required';
  constructor(status: QuoteStatus, version: number) {
    super(`The quote is ${status}; send the change with "revise": true to create version ${version + 1}. Nothing was changed.`, { status, version });
  }
}

/** api-v1: send from a status other than draft or sent. */
export class QuoteNotSendable extends DomainError {
  readonly code = 'quote_not_sendable';
  constructor(status: QuoteStatus) {
    super(`The quote is ${status}; only draft or sent quotes can be sent.`, { status });
  }
}

/** decisions §3: the customer can accept or reject only a sent or viewed quote that has not expired. */
export class QuoteNotActionable extends DomainError {
  readonly code = 'quote_not_actionable';
  constructor(status: QuoteStatus, expired = false) {
    super(
      expired ? 'This quote has expired and can no longer be accepted or rejected.' : `The quote is ${status} and cannot be accepted or rejected.`,
      { status: expired ? 'expired' : status },
    );
  }
}

/**
 * The customer answered a version that is no longer the current one: their page still showed an
 * earlier version when a later one was sent. Nothing applies; same code as any other quote the
 * customer cannot answer (decisions §6), so every client already handles it.
 */
export class QuoteVersionNotCurrent extends DomainError {
  readonly code = 'quote_not_actionable';
  constructor(status: QuoteStatus, version: number, answered: number) {
    const which =
      answered < version
        ? `Version ${answered} is no longer the current version of this quote (version ${version} was sent since).`
        : `This quote has no version ${answered}: its current version is ${version}.`;
    super(`${which} Nothing was changed; reload the quote to answer it.`, {
      status,
      version,
    });
  }
}
