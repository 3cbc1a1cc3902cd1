import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse, ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { ApiKeyGuard, CurrentCaller, pageLimit, type ApiCaller, type Page } from '@lib/http';
import { LeadDirectory, type Lead } from '../application/lead-directory';
import { LeadPageResponse, LeadResponse, ListLeadsQuery } from './lead.dto';

/** The external API is read-only for leads; their lifecycle advances in the app (admin API). */
@ApiTags('leads')
@ApiBearerAuth('apiKey')
@ApiUnauthorizedResponse({ description: '`unauthorized`: missing, malformed, unknown or revoked API key' })
@ApiForbiddenResponse({ description: '`forbidden_plan` for plans without API access' })
@UseGuards(ApiKeyGuard)
@Controller('api/v1/leads')
export class LeadsController {
  constructor(private readonly directory: LeadDirectory) {}

  @Get()
  @ApiOperation({ summary: 'List leads from the public contact form, newest first' })
  @ApiOkResponse({ type: LeadPageResponse })
  @ApiUnprocessableEntityResponse({ description: '`validation_error`: unknown status, limit outside 1..100, malformed cursor' })
  list(@CurrentCaller() caller: ApiCaller, @Query() query: ListLeadsQuery): Promise<Page<Lead>> {
    return this.directory.list(caller.organizationId, { status: query.status, limit: pageLimit(query), cursor: query.cursor });
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a lead (not wrapped in `data`)' })
  @ApiOkResponse({ type: LeadResponse })
  @ApiNotFoundResponse({ description: '`not_found`: unknown id or another organization\'s lead' })
  get(@CurrentCaller() caller: ApiCaller, @Param('id') id: string): Promise<Lead> {
    return this.directory.get(caller.organizationId, id);
  }
}
