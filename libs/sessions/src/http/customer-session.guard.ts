import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { bearerToken } from '@lib/http';
import { SessionReader } from '../application/session-reader';
import { SessionExpired } from '../domain/session.errors';

/** The customer's writes with a body, as Fastify names their routes: checked before the body is read (SessionsModule). */
export const CUSTOMER_WRITE_ROUTES = [
  ['PUT', '/storefront/v1/sessions/:sessionId/configuration'],
  ['POST', '/storefront/v1/sessions/:sessionId/submit'],
] as const;

/** Requests this guard's checks let through before their body was read (by any instance: Nest makes one per use). */
const admittedBeforeBody = new WeakSet<object>();

type SessionRequest = FastifyRequest<{ Params: { sessionId?: string } }>;

/**
 * Storefront session endpoints: the customer token of the session in `Authorization: Bearer`.
 * Writes to an expired session are refused here too (410) — reads still answer with `expired`.
 * The writes with a body run these checks before the body is read (admitBeforeBody), so a caller
 * without the token, or with an expired session, gets 401 or 410 whatever body it sends (not 400,
 * 413 or 415 about the body), and learns nothing about the body rules.
 */
@Injectable()
export class CustomerSessionGuard implements CanActivate {
  constructor(private readonly sessions: SessionReader) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<SessionRequest>();
    if (!admittedBeforeBody.has(request)) await this.check(request);
    return true;
  }

  async admitBeforeBody(request: FastifyRequest): Promise<void> {
    await this.check(request as SessionRequest);
    admittedBeforeBody.add(request);
  }

  private async check(request: SessionRequest): Promise<void> {
    const session = await this.sessions.authorize(request.params.sessionId ?? '', bearerToken(request));
    // The session's own decisions check the idle time again when the write is recorded.
    if (request.method !== 'GET' && request.method !== 'HEAD' && this.sessions.isExpired(session)) throw new SessionExpired();
  }
}
