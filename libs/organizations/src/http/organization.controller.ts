import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentCaller, type ApiCaller } from '@lib/http';
import { OrganizationDirectory, toPublicOrganization } from '../application/organization-directory';

@ApiTags('organization')
@ApiBearerAuth('apiKey')
@UseGuards(ApiKeyGuard)
@Controller('api/v1/organization')
export class OrganizationController {
  constructor(private readonly directory: OrganizationDirectory) {}

  @Get()
  async get(@CurrentCaller() caller: ApiCaller) {
    return toPublicOrganization(await this.directory.get(caller.organizationId));
  }
}
