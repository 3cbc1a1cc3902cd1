import { Body, Controller, Param, Patch, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { AdminGuard } from '@lib/http';
import { KnownOrganization } from '@lib/organizations';
import { ChangeLeadStatus } from '../application/lead.commands';
import type { Lead } from '../application/lead-directory';
import { ChangeLeadStatusDto, LeadResponse } from './lead.dto';

@ApiTags('admin')
@ApiBearerAuth('admin')
@UseGuards(AdminGuard, KnownOrganization)
@Controller('admin/v1/organizations/:orgId/leads')
export class AdminLeadsController {
  constructor(private readonly commands: CommandBus) {}

  @Patch(':leadId')
  @ApiOperation({ summary: 'Move a lead along new → contacted → closed' })
  @ApiOkResponse({ type: LeadResponse })
  @ApiNotFoundResponse({ description: '`not_found`: unknown organization, unknown lead or a lead of another organization' })
  @ApiUnprocessableEntityResponse({ description: '`validation_error`: unknown status, or a move backwards or to the current status' })
  async changeStatus(@Param('orgId') orgId: string, @Param('leadId') leadId: string, @Body() body: ChangeLeadStatusDto): Promise<Lead> {
    return this.commands.execute<ChangeLeadStatus, Lead>(new ChangeLeadStatus(orgId, leadId, body.status, 'admin'));
  }
}
