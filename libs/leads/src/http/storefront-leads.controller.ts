import { Body, Controller, Param, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNotFoundResponse, ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { idempotentId } from '@lib/http';
import { OrganizationDirectory } from '@lib/organizations';
import { SubmitLead } from '../application/lead.commands';
import { LeadCreatedResponse, SubmitLeadDto } from './lead.dto';

/** The organization's public contact form: no authentication, rate-limited per IP. */
@ApiTags('storefront')
@Controller('storefront/v1/:orgSlug/leads')
export class StorefrontLeadsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly organizations: OrganizationDirectory,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Send an enquiry through the public contact form', description: 'Creates a lead with status `new` and emits `lead.created`.' })
  @ApiCreatedResponse({ type: LeadCreatedResponse })
  @ApiNotFoundResponse({ description: '`not_found`: no organization has this slug' })
  @ApiUnprocessableEntityResponse({ description: '`validation_error` with `details.fields`' })
  async submit(@Param('orgSlug') orgSlug: string, @Body() body: SubmitLeadDto, @Req() request: FastifyRequest): Promise<{ id: string }> {
    const organization = await this.organizations.getBySlug(orgSlug);
    const id = await this.commands.execute<SubmitLead, string>(
      new SubmitLead(organization.id, { name: body.name, email: body.email, phone: body.phone ?? null, message: body.message }, 'storefront', idempotentId(request, 'lead')),
    );
    return { id };
  }
}
