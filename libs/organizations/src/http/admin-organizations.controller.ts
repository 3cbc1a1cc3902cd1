import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { AdminGuard, ApiErrors, decodeCursor, encodeCursor, idempotentId, KeptWithoutSecret, NoBody, pageLimit, PageQuery } from '@lib/http';
import { APP_CONFIG, ValidationFailed, type AppConfig } from '@lib/shared';
import { assertWebhookUrlsAllowed } from '@lib/webhooks/transport/webhook-url-policy';
import { CreateApiKey, CreateOrganization, RevokeApiKey, RotateSigningSecret, UpdateOrganization, type ApiKeyAnswer, type CreatedOrganization, type RotationAnswer, type UpdatedOrganization } from '../application/organization.commands';
import { OrganizationDirectory, toAdminOrganization } from '../application/organization-directory';
import { KnownOrganization } from './known-organization.guard';
import { AdminOrganizationResponse, ApiKeyListResponse, CreateApiKeyDto, CreateOrganizationDto, SigningSecretResponse, UpdatedOrganizationResponse, UpdateOrganizationDto } from './organization.dto';

/** Where an answer shows the signing secret it minted. */
const SHOWN_SECRET = ['settings', 'signingSecret'];

/** Shown in the answer of the write that minted it only: the events keep it sealed, and no other answer has it (api-v1 Authentication 6). */
function withMintedSecret(organization: ReturnType<typeof toAdminOrganization>, mintedSigningSecret: string | null) {
  return mintedSigningSecret === null ? organization : { ...organization, settings: { ...organization.settings, signingSecret: mintedSigningSecret } };
}

/** The cursor tag of the API-key list. */
const API_KEYS = 'api-keys';

/** What a PATCH may change; a PATCH with none of them is refused rather than answered as a no-op. */
const ORGANIZATION_PATCH_FIELDS = ['name', 'locale', 'unitSystem', 'currency', 'plan', 'settings'] as const;

@ApiTags('admin')
@ApiBearerAuth('admin')
@UseGuards(AdminGuard, KnownOrganization)
@Controller('admin/v1/organizations')
export class AdminOrganizationsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly directory: OrganizationDirectory,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @KeptWithoutSecret(SHOWN_SECRET)
  @ApiOperation({
    summary: 'Create an organization',
    description:
      'Settings with live pricing (`externalPricingEnabled`) or a webhook URL mint the webhook signing secret: this answer then shows it, once, as `settings.signingSecret`. ' +
      'An answer replayed under the same `Idempotency-Key` leaves it out.',
  })
  @ApiCreatedResponse({ type: UpdatedOrganizationResponse })
  async create(@Body() body: CreateOrganizationDto, @Req() request: FastifyRequest) {
    await assertWebhookUrlsAllowed(body.settings, { allowPrivateNetworks: this.config.webhookAllowPrivateNetworks });
    const { organizationId, mintedSigningSecret, created } = await this.commands.execute<CreateOrganization, CreatedOrganization>(
      new CreateOrganization(
        {
          name: body.name,
          slug: body.slug,
          locale: body.locale ?? 'en',
          unitSystem: body.unitSystem ?? 'metric',
          currency: body.currency ?? 'EUR',
          plan: body.plan ?? 'pro',
        },
        body.settings,
        idempotentId(request, 'org'),
      ),
    );
    // A minted secret is shown even when the read side lags: this answer is the only one that has it.
    return withMintedSecret(toAdminOrganization((await this.directory.find(organizationId)) ?? created), mintedSigningSecret);
  }

  @Get(':orgId')
  @ApiOkResponse({ type: AdminOrganizationResponse })
  async get(@Param('orgId') orgId: string) {
    return toAdminOrganization(await this.directory.get(orgId));
  }

  @Patch(':orgId')
  @ApiOperation({
    summary: 'Change an organization',
    description:
      'Enabling `externalPricingEnabled`, or a first `webhookUrl`/`pricingWebhookUrl`, mints the webhook signing secret when the organization has none: ' +
      'this answer then shows it, once, as `settings.signingSecret`.',
  })
  @ApiOkResponse({ type: UpdatedOrganizationResponse })
  async update(@Param('orgId') orgId: string, @Body() body: UpdateOrganizationDto) {
    if (!ORGANIZATION_PATCH_FIELDS.some((field) => body?.[field] !== undefined)) {
      throw new ValidationFailed([{ path: '', message: `provide at least one of: ${ORGANIZATION_PATCH_FIELDS.join(', ')}` }]);
    }
    await assertWebhookUrlsAllowed(body.settings, { allowPrivateNetworks: this.config.webhookAllowPrivateNetworks });
    const { settings, ...changes } = body;
    const { mintedSigningSecret } = await this.commands.execute<UpdateOrganization, UpdatedOrganization>(new UpdateOrganization(orgId, changes, settings));
    return withMintedSecret(toAdminOrganization(await this.directory.get(orgId)), mintedSigningSecret);
  }

  @Post(':orgId/api-keys')
  @KeptWithoutSecret(['key'])
  @ApiOperation({
    summary: 'Create an API key; the key is shown only in this response',
    description:
      'Organizations on plan `free` or `essential` cannot have API keys (403 `forbidden_plan`). ' +
      'A retry with the same `Idempotency-Key` creates no second key: it gets this answer without `key` (revoke that key and create another if the first answer was lost).',
  })
  @ApiCreatedResponse({
    description: '`key` is shown only in this response; it is absent from the replay under the same `Idempotency-Key`',
    schema: {
      type: 'object',
      required: ['id', 'name', 'readOnly', 'createdAt'],
      properties: { id: { type: 'string' }, name: { type: 'string' }, readOnly: { type: 'boolean' }, key: { type: 'string' }, createdAt: { type: 'integer', description: 'Unix ms' } },
    },
  })
  @ApiErrors('forbidden_plan')
  async createApiKey(@Param('orgId') orgId: string, @Body() body: CreateApiKeyDto, @Req() request: FastifyRequest): Promise<ApiKeyAnswer> {
    return this.commands.execute(new CreateApiKey(orgId, body.name, body.readOnly ?? false, idempotentId(request, 'key')));
  }

  @Get(':orgId/api-keys')
  @ApiOperation({ summary: 'List the active API keys, newest first (by `createdAt`, then `id`), never their secret' })
  @ApiOkResponse({ type: ApiKeyListResponse })
  async listApiKeys(@Param('orgId') orgId: string, @Query() query: PageQuery) {
    const after = decodeCursor(API_KEYS, query.cursor);
    const org = await this.directory.get(orgId);
    const newestFirst = org.apiKeys
      .filter((k) => k.revokedAt === null)
      .map(({ revokedAt: _r, ...key }) => key)
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const rest = after ? newestFirst.filter((k) => k.createdAt < (after[0] as number) || (k.createdAt === after[0] && k.id < (after[1] as string))) : newestFirst;
    const data = rest.slice(0, pageLimit(query));
    const last = data.at(-1);
    return { data, nextCursor: rest.length > data.length && last ? encodeCursor(API_KEYS, [last.createdAt, last.id]) : null };
  }

  @Delete(':orgId/api-keys/:keyId')
  @HttpCode(204)
  async revokeApiKey(@Param('orgId') orgId: string, @Param('keyId') keyId: string): Promise<void> {
    await this.commands.execute(new RevokeApiKey(orgId, keyId));
  }

  @Post(':orgId/signing-secret')
  @KeptWithoutSecret(['secret'])
  @ApiOperation({
    summary: 'Create or rotate the webhook signing secret; the previous one keeps signing for 24 h',
    description: 'A retry with the same `Idempotency-Key` rotates no second time: it gets this answer without `secret` (rotate again, without the key, if the first answer was lost).',
  })
  @ApiCreatedResponse({ type: SigningSecretResponse })
  async rotateSigningSecret(@Param('orgId') orgId: string, @NoBody() _body: undefined, @Req() request: FastifyRequest): Promise<RotationAnswer> {
    return this.commands.execute(new RotateSigningSecret(orgId, idempotentId(request, 'whs')));
  }
}
