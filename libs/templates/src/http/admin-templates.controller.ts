import { Body, Controller, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { AdminGuard, idempotentId } from '@lib/http';
import { CreateTemplate } from '../application/create-template.command';
import { ReplaceTemplate } from '../application/template.commands';
import { TemplateDirectory, toTemplateDetail } from '../application/template-directory';
import { TemplateBodySchema, TemplateDetail } from './template.schemas';

@ApiTags('admin')
@ApiBearerAuth('admin')
@UseGuards(AdminGuard)
@Controller('admin/v1/organizations/:orgId/templates')
export class AdminTemplatesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly templates: TemplateDirectory,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a template', description: 'Invalid bodies fail with 422 and every problem as `details.fields[{ path, message }]`.' })
  @ApiBody({ type: TemplateBodySchema })
  @ApiCreatedResponse({ type: TemplateDetail })
  async create(@Param('orgId') orgId: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const templateId = await this.commands.execute<CreateTemplate, string>(new CreateTemplate(orgId, body, idempotentId(request, 'tpl')));
    return toTemplateDetail(await this.templates.get(orgId, templateId));
  }

  @Put(':templateId')
  @ApiOperation({ summary: 'Replace a template', description: 'The body replaces the whole template. Existing submissions keep the choices they were made with.' })
  @ApiBody({ type: TemplateBodySchema })
  @ApiOkResponse({ type: TemplateDetail })
  async replace(@Param('orgId') orgId: string, @Param('templateId') templateId: string, @Body() body: unknown) {
    await this.commands.execute(new ReplaceTemplate(orgId, templateId, body));
    return toTemplateDetail(await this.templates.get(orgId, templateId));
  }
}
