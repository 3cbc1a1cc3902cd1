import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { OrganizationDirectory } from '../application/organization-directory';

/**
 * An unknown organization is 404 before the request's body or query is validated: a 422 about the
 * body of a request to no organization sent its client after the wrong problem (2026-11-27, found
 * by a review: `PATCH /admin/v1/organizations/org_nope {"locale":"fr"}` was 422). For the admin
 * routes under `/admin/v1/organizations/:orgId`, after AdminGuard.
 */
@Injectable()
export class KnownOrganization implements CanActivate {
  constructor(private readonly directory: OrganizationDirectory) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const { orgId } = context.switchToHttp().getRequest<FastifyRequest<{ Params: { orgId?: string } }>>().params;
    if (orgId !== undefined) await this.directory.get(orgId);
    return true;
  }
}
