import { Body, Controller, Get, Param, Post, Put, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '@lib/http';
import { stripHtml, ValidationFailed } from '@lib/shared';
import type { SubmissionCustomer } from '@lib/submissions';
import { ConfigurationSchema } from '@lib/templates';
import { ChangeSessionConfiguration, SubmitSession } from '../application/session.commands';
import { SessionReader } from '../application/session-reader';
import { CustomerSessionGuard } from './customer-session.guard';
import { CustomerDto, SubmitSessionDto } from './session.dto';
import { StorefrontSessionSchema, SubmittedSessionSchema } from './session.schemas';

/** Plain text, trimmed; an optional field left empty is null. */
function toCustomer(dto: CustomerDto): SubmissionCustomer {
  const text = (value: string | null | undefined) => {
    if (value === undefined || value === null) return null;
    const plain = stripHtml(value);
    return plain === '' ? null : plain;
  };
  const customer: SubmissionCustomer = {
    name: text(dto.name),
    email: dto.email.trim(),
    phone: text(dto.phone),
    companyName: text(dto.companyName),
    address: text(dto.address),
    postalCode: text(dto.postalCode),
    city: text(dto.city),
    country: text(dto.country),
  };
  if (customer.name === null) throw new ValidationFailed([{ path: 'customer.name', message: 'name must hold text, not only markup' }]);
  return customer;
}

/** The customer's own session: `Authorization: Bearer <customerToken>` from the response that started it. */
@ApiTags('storefront')
@ApiBearerAuth('customerToken')
@UseGuards(CustomerSessionGuard)
@ApiErrors('unauthorized')
@Controller('storefront/v1/sessions/:sessionId')
export class StorefrontSessionsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly sessions: SessionReader,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Read the session with its current pricing', description: 'An idle session past SESSION_IDLE_TTL_MS still reads, with status `expired`.' })
  @ApiOkResponse({ type: StorefrontSessionSchema })
  async get(@Param('sessionId') sessionId: string) {
    return this.sessions.present(sessionId);
  }

  @Put('configuration')
  @ApiOperation({
    summary: 'Save the configuration',
    description: 'Validated against the template (422 with field paths) and priced. 410 `session_expired` once idle past the limit; 409 `conflict` after submit.',
  })
  @ApiBody({ type: ConfigurationSchema })
  @ApiErrors('session_expired', 'conflict')
  @ApiOkResponse({ type: StorefrontSessionSchema })
  async configure(@Param('sessionId') sessionId: string, @Body() body: unknown) {
    await this.commands.execute(new ChangeSessionConfiguration(sessionId, body));
    return this.sessions.present(sessionId);
  }

  @Post('submit')
  @ApiOperation({
    summary: 'Submit the configuration',
    description: 'Needs a saved, valid configuration (422). Creates the submission; a live price for the final configHash is frozen onto it.',
  })
  @ApiCreatedResponse({ type: SubmittedSessionSchema })
  @ApiErrors('session_expired', 'conflict')
  async submit(@Param('sessionId') sessionId: string, @Body() body: SubmitSessionDto) {
    return this.commands.execute<SubmitSession, { submissionId: string }>(new SubmitSession(sessionId, toCustomer(body.customer)));
  }
}
