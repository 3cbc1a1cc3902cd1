import { Module } from '@nestjs/common';
import { HttpInfrastructureModule } from '@lib/http';
import { OrganizationsModule } from '@lib/organizations';

/**
 * Every domain library. Each process imports all of them: the gateway for its controllers and
 * command handlers, the projector and the outbox for the projections and reactors they register.
 */
@Module({
  imports: [HttpInfrastructureModule, OrganizationsModule],
  exports: [HttpInfrastructureModule, OrganizationsModule],
})
export class DomainModule {}
