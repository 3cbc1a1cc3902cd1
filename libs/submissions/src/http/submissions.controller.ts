import { Body, Controller, Get, Param, Patch, Query, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentCaller, decodeCursor, encodeCursor, pageLimit, type ApiCaller, type Page } from '@lib/http';
import { ValidationFailed } from '@lib/shared';
import { UpdateSubmission } from '../application/submission.commands';
import { SubmissionQueries, toSubmissionDetail, toSubmissionListItem } from '../application/submission-queries';
import { ListSubmissionsQuery, UpdateSubmissionDto } from './submission.dto';
import { SubmissionDetail, SubmissionPage } from './submission.schemas';

const LIST = 'submissions';

@ApiTags('submissions')
@ApiBearerAuth('apiKey')
@UseGuards(ApiKeyGuard)
@Controller('api/v1/submissions')
export class SubmissionsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly submissions: SubmissionQueries,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List submissions', description: 'Newest first. `createdAfter` and `createdBefore` are exclusive bounds in Unix ms.' })
  @ApiOkResponse({ type: SubmissionPage })
  async list(@CurrentCaller() caller: ApiCaller, @Query() query: ListSubmissionsQuery): Promise<Page<ReturnType<typeof toSubmissionListItem>>> {
    const { status, templateId, createdAfter, createdBefore } = query;
    const filters = { status, templateId, createdAfter, createdBefore };
    const after = decodeCursor(LIST, query.cursor, filters);
    const { items, nextAfter } = await this.submissions.list(caller.organizationId, filters, pageLimit(query), after);
    return { data: items.map(toSubmissionListItem), nextCursor: nextAfter ? encodeCursor(LIST, nextAfter, filters) : null };
  }

  @Get(':submissionId')
  @ApiOperation({ summary: 'Get a submission with its configuration, resolved configuration, frozen external pricing and latest quote' })
  @ApiOkResponse({ type: SubmissionDetail })
  async get(@CurrentCaller() caller: ApiCaller, @Param('submissionId') submissionId: string) {
    return toSubmissionDetail(await this.submissions.get(caller.organizationId, submissionId));
  }

  @Patch(':submissionId')
  @ApiOperation({ summary: 'Update the status and/or externalRef of a submission', description: 'At least one of the two fields is required. Returns the updated submission.' })
  @ApiOkResponse({ type: SubmissionDetail })
  async update(@CurrentCaller() caller: ApiCaller, @Param('submissionId') submissionId: string, @Body() body: UpdateSubmissionDto) {
    if (body.status === undefined && body.externalRef === undefined) {
      throw new ValidationFailed([{ path: '', message: 'give at least one of status and externalRef' }]);
    }
    await this.submissions.get(caller.organizationId, submissionId);
    await this.commands.execute(new UpdateSubmission(caller.organizationId, submissionId, { status: body.status, externalRef: body.externalRef }, caller.actor));
    return toSubmissionDetail(await this.submissions.get(caller.organizationId, submissionId));
  }
}
