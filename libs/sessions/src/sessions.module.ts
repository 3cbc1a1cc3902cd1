import { Module } from '@nestjs/common';
import { BeforeBodyChecks } from '@lib/http';
import { OrganizationsModule } from '@lib/organizations';
import { ProjectionRegistry, ReactorRegistry } from '@lib/runtime';
import { TemplatesModule } from '@lib/templates';
import { SESSION_COMMAND_HANDLERS } from './application/session.commands';
import { SessionReader } from './application/session-reader';
import { SubmissionFollowUpReactor } from './application/submission-follow-up.reactor';
import { CUSTOMER_WRITE_ROUTES, CustomerSessionGuard } from './http/customer-session.guard';
import { SessionStreamController } from './http/session-stream.controller';
import { StorefrontSessionsController } from './http/storefront-sessions.controller';
import { StorefrontController } from './http/storefront.controller';
import { SessionChangeFeed } from './live/session-change-feed';
import { SessionEventStreams } from './live/session-event-streams';
import { sessionsProjection } from './projections/sessions.projection';

@Module({
  imports: [OrganizationsModule, TemplatesModule],
  controllers: [StorefrontController, StorefrontSessionsController, SessionStreamController],
  providers: [...SESSION_COMMAND_HANDLERS, SessionReader, CustomerSessionGuard, SubmissionFollowUpReactor, SessionChangeFeed, SessionEventStreams],
  exports: [SessionReader],
})
export class SessionsModule {
  constructor(projections: ProjectionRegistry, reactors: ReactorRegistry, followUp: SubmissionFollowUpReactor, beforeBody: BeforeBodyChecks, guard: CustomerSessionGuard) {
    projections.register(sessionsProjection);
    reactors.register(followUp);
    for (const [method, route] of CUSTOMER_WRITE_ROUTES) beforeBody.register(method, route, (request) => guard.admitBeforeBody(request));
  }
}
