import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { bearerToken } from '@lib/http';
import { SessionReader } from '../application/session-reader';
import { SessionExpired } from '../domain/session.errors';

/**
 * Storefront session endpoints: the customer token of the session in `Authorization: Bearer`.
 * Runs before body validation, so a caller without the token learns nothing about the body rules.
 * Writes to an expired session are refused here too (410) — reads still answer with `expired`.
 */
@Injectable()
export class CustomerSessionGuard implements CanActivate {
  constructor(private readonly sessions: SessionReader) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest<{ Params: { sessionId?: string } }>>();
    const session = await this.sessions.authorize(request.params.sessionId ?? '', bearerToken(request));
    if (request.method !== 'GET' && request.method !== 'HEAD' && this.sessions.isExpired(session)) throw new SessionExpired();
    return true;
  }
}
