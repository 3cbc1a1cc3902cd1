import { Body, Controller, Get, Param, Put, Req } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiProperty, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '@lib/http';
import { ConfigurationSessionSchema } from '@lib/sessions';
import { ConfigurationSessionAccess, type AdjustmentApplied } from '../application/configuration-session-access';
import { AdjustmentsDto } from './adjustment.dto';

class AdjustmentAppliedSchema {
  @ApiProperty({ enum: [true] }) applied: boolean;
  @ApiProperty({ description: "Whether the written configHash is the session's current one" }) isCurrentConfiguration: boolean;
}

const TOKEN_PARAM = { name: 'token', description: 'The capability token from `data.callback.url` of a `pricing.calculated` event (`pct_…`)' };

/**
 * api-v1 "Configuration sessions": capability URLs for the external pricing system. The token in
 * the path is the only credential — no Authorization header — and the rate limit is per IP.
 */
/** The write route as Fastify names it, whose checks 1 to 4 run before its body is read (PricingLoopModule). */
export const ADJUSTMENTS_ROUTE = '/api/v1/configuration-sessions/:token/adjustments';

@ApiTags('configuration-sessions')
@Controller('api/v1/configuration-sessions/:token')
export class ConfigurationSessionsController {
  constructor(private readonly access: ConfigurationSessionAccess) {}

  @Get()
  @ApiOperation({
    summary: 'Read the configuration session a pricing event is about',
    description: 'Answers while the token is valid (not superseded by a redelivery) and live pricing is on, also after its write window; an expired session reads with status `expired`.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiOkResponse({ type: ConfigurationSessionSchema })
  @ApiErrors('unauthorized', 'forbidden_plan')
  async read(@Param('token') token: string) {
    return this.access.read(token);
  }

  @Put('adjustments')
  @ApiOperation({
    summary: 'Replace the price breakdown shown for a configuration',
    description:
      'Idempotent full replace for `configHash`; the subtotal is computed server-side. Checks, in this order: 401 `unauthorized`, 403 `forbidden_plan`, 410 `session_expired`, 403 `window_expired` (these four before the body is read), then the body (400 `invalid_json`, 413, 415, 422 `validation_error`), 409 `stale_config_hash` (`details.currentConfigHash`). A write after the customer-facing timeout still applies; on a submitted session it is frozen onto the submission.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiBody({ type: AdjustmentsDto })
  @ApiOkResponse({ type: AdjustmentAppliedSchema })
  @ApiErrors('unauthorized', 'forbidden_plan', 'window_expired', 'session_expired', 'stale_config_hash')
  async write(@Param('token') token: string, @Body() body: unknown, @Req() request: object): Promise<AdjustmentApplied> {
    return this.access.writeAdjustment(token, body, request);
  }
}
