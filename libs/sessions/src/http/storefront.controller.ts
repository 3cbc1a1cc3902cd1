import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ShowsSecretOnce } from '@lib/http';
import { OrganizationDirectory } from '@lib/organizations';
import { TemplateCatalog, TemplateDirectory, toCatalog } from '@lib/templates';
import { StartSession, type StartedSession } from '../application/session.commands';
import { SessionReader } from '../application/session-reader';
import { StartSessionDto } from './session.dto';
import { StartedSessionSchema, StorefrontSchema } from './session.schemas';

/** The organization's public storefront: what the configurator page loads before a session exists. */
@ApiTags('storefront')
@Controller('storefront/v1/:orgSlug')
export class StorefrontController {
  constructor(
    private readonly commands: CommandBus,
    private readonly organizations: OrganizationDirectory,
    private readonly templates: TemplateDirectory,
    private readonly sessions: SessionReader,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The organization and its templates' })
  @ApiOkResponse({ type: StorefrontSchema })
  async storefront(@Param('orgSlug') orgSlug: string) {
    const organization = await this.organizations.getBySlug(orgSlug);
    const templates = await this.templates.listAll(organization.id);
    return {
      organization: {
        name: organization.name,
        slug: organization.slug,
        locale: organization.locale,
        unitSystem: organization.unitSystem,
        currency: organization.currency,
      },
      templates: templates.map((t) => ({ id: t.id, name: t.body.name, productType: t.body.productCategory })),
    };
  }

  @Get('templates/:templateId')
  @ApiOperation({ summary: 'A template with its catalog' })
  @ApiOkResponse({ type: TemplateCatalog })
  async template(@Param('orgSlug') orgSlug: string, @Param('templateId') templateId: string) {
    const organization = await this.organizations.getBySlug(orgSlug);
    return toCatalog(await this.templates.get(organization.id, templateId));
  }

  @Post('sessions')
  // Anonymous: a stored answer would hand the customer token to anyone behind the same IP with the same key.
  @ShowsSecretOnce()
  @ApiOperation({ summary: 'Start a configuration session', description: 'The customerToken is shown only in this response: an `Idempotency-Key` is checked and then ignored, and a retry starts another session.' })
  @ApiCreatedResponse({ type: StartedSessionSchema })
  async startSession(@Param('orgSlug') orgSlug: string, @Body() body: StartSessionDto) {
    const organization = await this.organizations.getBySlug(orgSlug);
    const { sessionId, customerToken } = await this.commands.execute<StartSession, StartedSession>(
      new StartSession(organization.id, body.templateId, body.origin, body.locale),
    );
    return { sessionId, customerToken, session: await this.sessions.present(sessionId) };
  }
}
