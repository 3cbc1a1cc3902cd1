import { Controller, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { AdminGuard, ApiErrors, idempotentId, NoBody } from '@lib/http';
import { RequestAutofill } from '../application/external-pricing.commands';

class AutofillRequestedSchema {
  @ApiProperty({ enum: [true] }) requested: boolean;
}

/** Admin API (stands in for the dashboard): what an organization user does with a submission. */
@ApiTags('admin')
@ApiBearerAuth('admin')
@UseGuards(AdminGuard)
@Controller('admin/v1/organizations/:orgId/submissions')
export class AdminSubmissionsController {
  constructor(private readonly commands: CommandBus) {}

  @Post(':submissionId/autofill')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Ask the external system for a live price of a submission (quote auto-fill)',
    description:
      'Emits `pricing.calculated` with context `autofill` for the submitted configuration. The answer (PUT to `data.callback.url`) is frozen onto the submission as `externalPricing`, which a quote created without line items then uses. 403 `forbidden_plan` while `externalPricingEnabled` is off. ' +
      'A retry with the same `Idempotency-Key` whose first answer was lost (within 24 h) is answered 202 and asks the partner nothing more.',
  })
  @ApiAcceptedResponse({ type: AutofillRequestedSchema })
  @ApiErrors('forbidden_plan')
  async autofill(@Param('orgId') orgId: string, @Param('submissionId') submissionId: string, @NoBody() _body: undefined, @Req() request: FastifyRequest): Promise<{ requested: true }> {
    await this.commands.execute(new RequestAutofill(orgId, submissionId, 'admin', idempotentId(request, 'autofill')));
    return { requested: true };
  }
}
