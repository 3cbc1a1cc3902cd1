import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { ForbiddenPlan, ReadOnlyKey, Unauthorized } from '@lib/shared';

/** Who is calling, resolved once per request (see registerRequestAuthentication). */
export type Caller =
  | { kind: 'apiKey'; organizationId: string; keyId: string; readOnly: boolean; planAllowsApi: boolean }
  | { kind: 'admin' }
  /** `problem`: why the credentials sent do not name a caller, when that is known before they are checked */
  | { kind: 'anonymous'; problem?: string };

export interface ApiKeyIdentity {
  organizationId: string;
  keyId: string;
  readOnly: boolean;
  planAllowsApi: boolean;
}

/** Implemented by the organizations library; the HTTP layer only knows this contract. */
export abstract class CredentialResolver {
  /**
   * Resolves a raw `qk_live_…` key; null when unknown, malformed or revoked. Answers without a
   * promise when it can (a resolution it keeps), since every request of the external API asks.
   */
  abstract resolveApiKey(rawKey: string): ApiKeyIdentity | null | Promise<ApiKeyIdentity | null>;
  /** What resolveApiKey would answer, when it can answer without a read; undefined when it cannot. */
  abstract keptApiKey(rawKey: string): ApiKeyIdentity | null | undefined;
  abstract isAdminToken(token: string): boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
  }
}

export function bearerToken(request: FastifyRequest): string | null {
  return bearerTokenOf(authorizationHeader(request.raw));
}

/**
 * The request's Authorization header; undefined without one, and with more than one: Node keeps
 * the first of repeated Authorization headers, while a proxy or the client's own log may read the
 * last, so such a request does not name one caller and is answered as one without credentials.
 */
export function authorizationHeader(request: IncomingMessage): string | undefined {
  return repeatedAuthorization(request) ? undefined : request.headers.authorization;
}

/** Whether the request has the Authorization header more than once. */
export function repeatedAuthorization(request: IncomingMessage): boolean {
  const raw = request.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization' && ++seen > 1) return true;
  }
  return false;
}

export const REPEATED_AUTHORIZATION = 'Send one Authorization header: this request has more than one.';

/** The token of an `Authorization: Bearer <token>` header value, or null. */
export function bearerTokenOf(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/** The organization-scoped caller of an external-API request. */
export interface ApiCaller {
  organizationId: string;
  keyId: string;
  readOnly: boolean;
  /** event metadata actor, e.g. `apiKey:<id>` */
  actor: string;
}

/** External API: a valid key of an organization on a plan with API access; read-only keys may only read. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const refusal = apiKeyRefusal(request.caller, request.method);
    if (refusal) throw refusal;
    return true;
  }
}

/**
 * Why ApiKeyGuard refuses a caller, or null: no valid key (401), a plan without API access (403
 * `forbidden_plan`), a read-only key on a write (403 `read_only_key`). Also asked before the body
 * is read (configureHttpApplication), so that a caller who may not make the request is told so,
 * not that its body is malformed.
 */
export function apiKeyRefusal(caller: Caller | undefined, method: string): Error | null {
  if (!caller || caller.kind !== 'apiKey') return new Unauthorized(problemOf(caller) ?? 'A valid API key is required: Authorization: Bearer <API_KEY>.');
  if (!caller.planAllowsApi) return new ForbiddenPlan('The organization plan does not include API access.');
  if (caller.readOnly && !['GET', 'HEAD', 'OPTIONS'].includes(method)) return new ReadOnlyKey();
  return null;
}

/** Why an admin route refuses the caller (401), or null. */
export function adminRefusal(caller: Caller | undefined): Error | null {
  return caller?.kind === 'admin' ? null : new Unauthorized(problemOf(caller) ?? 'A valid admin token is required: Authorization: Bearer <ADMIN_TOKEN>.');
}

const problemOf = (caller: Caller | undefined): string | undefined => (caller?.kind === 'anonymous' ? caller.problem : undefined);

@Injectable()
export class AdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const refusal = adminRefusal(context.switchToHttp().getRequest<FastifyRequest>().caller);
    if (refusal) throw refusal;
    return true;
  }
}

export const CurrentCaller = createParamDecorator((_: unknown, context: ExecutionContext): ApiCaller => {
  const caller = context.switchToHttp().getRequest<FastifyRequest>().caller;
  if (!caller || caller.kind !== 'apiKey') throw new Unauthorized();
  return { organizationId: caller.organizationId, keyId: caller.keyId, readOnly: caller.readOnly, actor: `apiKey:${caller.keyId}` };
});
