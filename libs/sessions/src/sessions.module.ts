import { Module } from '@nestjs/common';
import { OrganizationsModule } from '@lib/organizations';
import { ProjectionRegistry } from '@lib/runtime';
import { TemplatesModule } from '@lib/templates';
import { SESSION_COMMAND_HANDLERS } from './application/session.commands';
import { SessionReader } from './application/session-reader';
import { CustomerSessionGuard } from './http/customer-session.guard';
import { StorefrontSessionsController } from './http/storefront-sessions.controller';
import { StorefrontController } from './http/storefront.controller';
import { sessionsProjection } from './projections/sessions.projection';

@Module({
  imports: [OrganizationsModule, TemplatesModule],
  controllers: [StorefrontController, StorefrontSessionsController],
  providers: [...SESSION_COMMAND_HANDLERS, SessionReader, CustomerSessionGuard],
  exports: [SessionReader],
})
export class SessionsModule {
  constructor(registry: ProjectionRegistry) {
    registry.register(sessionsProjection);
  }
}
