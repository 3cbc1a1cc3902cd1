import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentCaller, decodeCursor, encodeCursor, pageLimit, PageQuery, type ApiCaller, type Page } from '@lib/http';
import { TemplateDirectory, toCatalog, toTemplateDetail, toTemplateListItem } from '../application/template-directory';
import { TemplateCatalog, TemplateDetail, TemplatePage } from './template.schemas';

const LIST = 'templates';

@ApiTags('templates')
@ApiBearerAuth('apiKey')
@UseGuards(ApiKeyGuard)
@Controller('api/v1/templates')
export class TemplatesController {
  constructor(private readonly templates: TemplateDirectory) {}

  @Get()
  @ApiOperation({ summary: 'List templates', description: 'Newest first (by `createdAt`, then `id`).' })
  @ApiOkResponse({ type: TemplatePage })
  async list(@CurrentCaller() caller: ApiCaller, @Query() query: PageQuery): Promise<Page<ReturnType<typeof toTemplateListItem>>> {
    const after = decodeCursor(LIST, query.cursor);
    const { items, nextAfter } = await this.templates.list(caller.organizationId, pageLimit(query), after);
    return { data: items.map(toTemplateListItem), nextCursor: nextAfter ? encodeCursor(LIST, nextAfter) : null };
  }

  @Get(':templateId')
  @ApiOperation({ summary: 'Get a template with its full body' })
  @ApiOkResponse({ type: TemplateDetail })
  async get(@CurrentCaller() caller: ApiCaller, @Param('templateId') templateId: string) {
    return toTemplateDetail(await this.templates.get(caller.organizationId, templateId));
  }

  @Get(':templateId/catalog')
  @ApiOperation({ summary: "Get a template's catalog: components, option groups, options, materials and sections" })
  @ApiOkResponse({ type: TemplateCatalog })
  async catalog(@CurrentCaller() caller: ApiCaller, @Param('templateId') templateId: string) {
    return toCatalog(await this.templates.get(caller.organizationId, templateId));
  }
}
