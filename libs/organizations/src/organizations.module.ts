import { Module } from '@nestjs/common';
import { CredentialResolver } from '@lib/http';
import { ProjectionRegistry } from '@lib/runtime';
import { OrganizationCredentialResolver } from './application/api-keys';
import { ORGANIZATION_COMMAND_HANDLERS } from './application/organization.commands';
import { OrganizationDirectory } from './application/organization-directory';
import { AdminOrganizationsController } from './http/admin-organizations.controller';
import { OrganizationController } from './http/organization.controller';
import { organizationsProjection } from './projections/organizations.projection';
import { SigningSecretsModule } from './signing-secrets.module';

@Module({
  imports: [SigningSecretsModule],
  controllers: [AdminOrganizationsController, OrganizationController],
  providers: [...ORGANIZATION_COMMAND_HANDLERS, OrganizationDirectory, { provide: CredentialResolver, useClass: OrganizationCredentialResolver }],
  exports: [OrganizationDirectory, CredentialResolver],
})
export class OrganizationsModule {
  constructor(registry: ProjectionRegistry) {
    registry.register(organizationsProjection);
  }
}
