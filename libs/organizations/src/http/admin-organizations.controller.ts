import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminGuard } from '@lib/http';
import { APP_CONFIG, stripHtml, type AppConfig } from '@lib/shared';
import { assertWebhookUrlsAllowed } from '@lib/webhooks/transport/webhook-url-policy';
import { CreateApiKey, CreateOrganization, RevokeApiKey, RotateSigningSecret, UpdateOrganization, type CreatedApiKey } from '../application/organization.commands';
import { OrganizationDirectory, toAdminOrganization } from '../application/organization-directory';
import { CreateApiKeyDto, CreateOrganizationDto, UpdateOrganizationDto } from './organization.dto';

@ApiTags('admin')
@ApiBearerAuth('admin')
@UseGuards(AdminGuard)
@Controller('admin/v1/organizations')
export class AdminOrganizationsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly directory: OrganizationDirectory,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create an organization' })
  async create(@Body() body: CreateOrganizationDto) {
    await assertWebhookUrlsAllowed(body.settings, { allowPrivateNetworks: this.config.webhookAllowPrivateNetworks });
    const id = await this.commands.execute<CreateOrganization, string>(
      new CreateOrganization(
        {
          name: stripHtml(body.name),
          slug: body.slug,
          locale: body.locale ?? 'en',
          unitSystem: body.unitSystem ?? 'metric',
          currency: body.currency ?? 'EUR',
          plan: body.plan ?? 'pro',
        },
        body.settings,
      ),
    );
    return toAdminOrganization(await this.directory.get(id));
  }

  @Get(':orgId')
  async get(@Param('orgId') orgId: string) {
    return toAdminOrganization(await this.directory.get(orgId));
  }

  @Patch(':orgId')
  async update(@Param('orgId') orgId: string, @Body() body: UpdateOrganizationDto) {
    await this.directory.get(orgId);
    await assertWebhookUrlsAllowed(body.settings, { allowPrivateNetworks: this.config.webhookAllowPrivateNetworks });
    const { settings, ...changes } = body;
    if (changes.name !== undefined) changes.name = stripHtml(changes.name);
    await this.commands.execute(new UpdateOrganization(orgId, changes, settings));
    return toAdminOrganization(await this.directory.get(orgId));
  }

  @Post(':orgId/api-keys')
  @ApiOperation({ summary: 'Create an API key; the key is shown only in this response' })
  async createApiKey(@Param('orgId') orgId: string, @Body() body: CreateApiKeyDto): Promise<CreatedApiKey> {
    await this.directory.get(orgId);
    return this.commands.execute(new CreateApiKey(orgId, stripHtml(body.name), body.readOnly ?? false));
  }

  @Get(':orgId/api-keys')
  async listApiKeys(@Param('orgId') orgId: string) {
    const org = await this.directory.get(orgId);
    return { data: org.apiKeys.filter((k) => k.revokedAt === null).map(({ revokedAt: _r, ...key }) => key), nextCursor: null };
  }

  @Delete(':orgId/api-keys/:keyId')
  @HttpCode(204)
  async revokeApiKey(@Param('orgId') orgId: string, @Param('keyId') keyId: string): Promise<void> {
    await this.directory.get(orgId);
    await this.commands.execute(new RevokeApiKey(orgId, keyId));
  }

  @Post(':orgId/signing-secret')
  @ApiOperation({ summary: 'Create or rotate the webhook signing secret; the previous one keeps signing for 24 h' })
  async rotateSigningSecret(@Param('orgId') orgId: string): Promise<{ secret: string }> {
    await this.directory.get(orgId);
    return this.commands.execute(new RotateSigningSecret(orgId));
  }
}
