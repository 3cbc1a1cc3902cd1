import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentCaller, type ApiCaller } from '@lib/http';
import { OrganizationDirectory, toPublicOrganization } from '../application/organization-directory';
import { OrganizationResponse } from './organization.dto';

@ApiTags('organization')
@ApiBearerAuth('apiKey')
@UseGuards(ApiKeyGuard)
@Controller('api/v1/organization')
export class OrganizationController {
  constructor(private readonly directory: OrganizationDirectory) {}

  @Get()
  @ApiOkResponse({ type: OrganizationResponse })
  async get(@CurrentCaller() caller: ApiCaller) {
    return toPublicOrganization(await this.directory.get(caller.organizationId));
  }
}
