import { Body, Controller, Get, Param, Patch, Post, Query, Res, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import {
  ApiBearerAuth, ApiCreatedResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags,
  ApiUnauthorizedResponse, ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiKeyGuard, CurrentCaller, pageLimit, type ApiCaller, type Page } from '@lib/http';
import { ValidationFailed } from '@lib/shared';
import { ChangeContact, UpsertContact, type UpsertedContact } from '../application/contact.commands';
import { ContactDirectory, type Contact } from '../application/contact-directory';
import { CONTACT_DETAIL_FIELDS } from '../domain/contact.events';
import { ChangeContactDto, ContactPageResponse, ContactResponse, ListContactsQuery, UpsertContactDto, UpsertContactResponse } from './contact.dto';

@ApiTags('contacts')
@ApiBearerAuth('apiKey')
@ApiUnauthorizedResponse({ description: '`unauthorized`: missing, malformed, unknown or revoked API key' })
@ApiForbiddenResponse({ description: '`read_only_key` on writes with a read-only key; `forbidden_plan` for plans without API access' })
@UseGuards(ApiKeyGuard)
@Controller('api/v1/contacts')
export class ContactsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly directory: ContactDirectory,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List contacts, newest first', description: '`email` filters by exact, case-insensitive match.' })
  @ApiOkResponse({ type: ContactPageResponse })
  @ApiUnprocessableEntityResponse({ description: '`validation_error`: limit outside 1..100, malformed cursor, unknown parameter' })
  list(@CurrentCaller() caller: ApiCaller, @Query() query: ListContactsQuery): Promise<Page<Contact>> {
    return this.directory.list(caller.organizationId, { email: query.email, limit: pageLimit(query), cursor: query.cursor });
  }

  @Post()
  @ApiOperation({
    summary: 'Create or update the contact of an e-mail address',
    description:
      'Idempotent upsert keyed by the case-insensitive e-mail. Given fields replace the stored ones (null clears), omitted fields stay. ' +
      'Repeating a request changes nothing, `updatedAt` included.',
  })
  @ApiCreatedResponse({ type: UpsertContactResponse, description: 'The contact was created (`created: true`).' })
  @ApiOkResponse({ type: UpsertContactResponse, description: 'The contact existed and was updated or left as it was (`created: false`).' })
  @ApiUnprocessableEntityResponse({ description: '`validation_error` with `details.fields`' })
  async upsert(
    @CurrentCaller() caller: ApiCaller,
    @Body() body: UpsertContactDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Contact & { created: boolean }> {
    const { email, ...fields } = body;
    const { contact, created } = await this.commands.execute<UpsertContact, UpsertedContact>(
      new UpsertContact(caller.organizationId, email, fields, caller.actor),
    );
    reply.status(created ? 201 : 200);
    return { ...contact, created };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a contact' })
  @ApiOkResponse({ type: ContactResponse })
  @ApiNotFoundResponse({ description: '`not_found`: unknown id or another organization\'s contact' })
  get(@CurrentCaller() caller: ApiCaller, @Param('id') id: string): Promise<Contact> {
    return this.directory.get(caller.organizationId, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change a contact', description: 'Any subset of the fields; null clears a field (not `name`). The e-mail cannot change.' })
  @ApiOkResponse({ type: ContactResponse })
  @ApiNotFoundResponse({ description: '`not_found`: unknown id or another organization\'s contact' })
  @ApiUnprocessableEntityResponse({ description: '`validation_error`: an empty body, or invalid fields' })
  change(@CurrentCaller() caller: ApiCaller, @Param('id') id: string, @Body() body: ChangeContactDto): Promise<Contact> {
    const changes = Object.fromEntries(CONTACT_DETAIL_FIELDS.filter((field) => body[field] !== undefined).map((field) => [field, body[field]]));
    if (Object.keys(changes).length === 0) {
      throw new ValidationFailed([{ path: '', message: `provide at least one of: ${CONTACT_DETAIL_FIELDS.join(', ')}` }]);
    }
    return this.commands.execute(new ChangeContact(caller.organizationId, id, changes, caller.actor));
  }
}
