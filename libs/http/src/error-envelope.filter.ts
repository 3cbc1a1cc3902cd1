import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, RateLimited, StoreRefusals } from '@lib/shared';
import { statusOf } from './error-status';

export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

export function errorBody(code: string, message: string, details?: Record<string, unknown>): ErrorBody {
  return { error: details ? { code, message, details } : { code, message } };
}

const HTTP_CODES: Record<number, [string, string]> = {
  400: ['invalid_json', 'The request body is not valid JSON.'],
  401: ['unauthorized', 'Authentication failed.'],
  404: ['not_found', 'Not found.'],
  405: ['not_found', 'Not found.'],
  413: ['payload_too_large', 'The request body is larger than 1 MiB.'],
  415: ['unsupported_media_type', 'Send the body as application/json.'],
};

/** Maps a thrown value to the error envelope; never leaks a stack trace or internal detail. */
export function toErrorResponse(exception: unknown): { status: number; body: ErrorBody; retryAfter?: number; storeRefusal?: string } {
  if (exception instanceof DomainError) {
    const status = statusOf(exception.code);
    const retryAfter = exception instanceof RateLimited ? exception.retryAfterSeconds : exception.code === 'unavailable' ? 1 : undefined;
    return { status, body: errorBody(exception.code, exception.message, exception.details), retryAfter };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const [code, message] = HTTP_CODES[status] ?? (status < 500 ? ['validation_error', exception.message] : ['internal_error', 'Internal error.']);
    return { status: status === 405 ? 404 : status, body: errorBody(code, message) };
  }
  const fastifyCode = (exception as { code?: string })?.code;
  if (typeof fastifyCode === 'string' && fastifyCode.startsWith('FST_')) return fromFastifyError(exception as { code: string; statusCode?: number });
  if (exception instanceof SyntaxError) return { status: 400, body: errorBody('invalid_json', 'The request body is not valid JSON.') };
  const refusal = engineUnavailableCode(exception);
  if (refusal) {
    const message =
      'A store the service writes to is unavailable (full, read-only or unreachable), and part of the request may have been stored. ' +
      'Send it again with the same Idempotency-Key, which finds what was stored, rather than without one.';
    return { status: 503, body: errorBody('unavailable', message), retryAfter: ENGINE_RETRY_AFTER_SECONDS, storeRefusal: refusal };
  }
  return { status: 500, body: errorBody('internal_error', 'Internal error.') };
}

/** How long a client is asked to wait after a store failed: a full disk or a failover takes seconds, not one. */
const ENGINE_RETRY_AFTER_SECONDS = 5;

/** SQLite result codes of a store that cannot take a write now (full, read-only, I/O, locked), not of a bad request or a bug. */
const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|BUSY|LOCKED|PROTOCOL)/;
/** File-system errors of the same kind (a PDF, a mail file, a key beside the stores). */
const FILE_UNAVAILABLE = new Set(['ENOSPC', 'EIO', 'EROFS', 'EDQUOT']);
/** Driver errors of an unreachable engine: MongoDB's network and selection errors, any KafkaJS error, EventStoreDB's unavailable. */
const ENGINE_ERROR_NAMES = /^(Mongo(Network|NetworkTimeout|ServerSelection|NotConnected|TopologyClosed)Error|KafkaJS\w*|UnavailableError)$/;

/**
 * Whether a failure is a backing engine's that cannot serve now (decisions §3: 503 `unavailable`
 * with `Retry-After`), told by the error's code or name so that this module needs none of the
 * drivers. Until 2026-11-27 a full disk or a read-only store was answered 500 `internal_error`,
 * which an alert takes for a bug (found by a review). A request of several writes may have made
 * the first (a quote's number reservation before the quote), so the answer says so and points to
 * the Idempotency-Key, with which a retry finds what was made (a review of this change).
 */
function engineUnavailableCode(exception: unknown): string | null {
  if (!exception || typeof exception !== 'object') return null;
  const { code, name } = exception as { code?: unknown; name?: unknown };
  if (typeof code === 'string' && (SQLITE_UNAVAILABLE.test(code) || FILE_UNAVAILABLE.has(code))) return code;
  return typeof name === 'string' && ENGINE_ERROR_NAMES.test(name) ? name : null;
}

function fromFastifyError(error: { code: string; statusCode?: number }) {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: errorBody('payload_too_large', 'The request body is larger than 1 MiB.') };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: errorBody('unsupported_media_type', 'Send the body as application/json.') };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, body: errorBody('invalid_json', 'The request body is empty or not valid JSON.') };
    default: {
      const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
      return status === 500
        ? { status, body: errorBody('internal_error', 'Internal error.') }
        : { status, body: errorBody(HTTP_CODES[status]?.[0] ?? 'validation_error', HTTP_CODES[status]?.[1] ?? 'The request is invalid.') };
    }
  }
}

/** Answers with the envelope of `exception` (toErrorResponse) and the headers its status calls for; returns the status. */
export function replyWithError(reply: FastifyReply, exception: unknown): number {
  const { status, body, retryAfter, storeRefusal } = toErrorResponse(exception);
  if (storeRefusal) StoreRefusals.mark(reply.request, storeRefusal);
  if (retryAfter !== undefined) reply.header('Retry-After', String(retryAfter));
  if (status === 401) reply.header('WWW-Authenticate', 'Bearer');
  reply.status(status).type('application/json').send(body);
  return status;
}

@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const status = replyWithError(http.getResponse<FastifyReply>(), exception);
    if (status >= 500) {
      const message = exception instanceof Error ? exception.stack ?? exception.message : String(exception);
      this.logger.error({ requestId: http.getRequest<FastifyRequest>().id, msg: message });
    }
  }
}
