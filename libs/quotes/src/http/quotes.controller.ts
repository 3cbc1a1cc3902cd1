import { Body, Controller, Get, Headers, HttpCode, Param, Patch, Post, Put, Query, Req, Res, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiErrors, ApiKeyGuard, CurrentCaller, decodeCursor, encodeCursor, idempotentId, ListResponses, PageQuery, pageJson, pageLimit, type ApiCaller } from '@lib/http';
import { ValidationFailed } from '@lib/shared';
import { quoteETag, type IfMatch } from '../domain/quote.decider';
import { TERM_FIELDS, type QuoteTerms } from '../domain/quote.events';
import { toQuoteLines } from '../application/line-items';
import {
  ChangeQuote,
  CreateQuote,
  ReplaceQuoteLineItems,
  SendQuote,
  type QuoteVersionResult,
  type SentQuote,
} from '../application/quote.commands';
import { QuoteQueries, toQuoteDetail } from '../application/quote-queries';
import { QuoteMailJobs, toMailDelivery } from '../documents/quote-mail-jobs';
import { QuotePdfs } from '../documents/quote-pdfs';
import {
  CreateQuoteDto,
  ListQuotesQuery,
  QuoteDetailView,
  QuoteIdResponse,
  QuoteLineItemsResponse,
  QuoteListPage,
  QuoteMailsPage,
  QuoteSentResponse,
  QuoteVersionResponse,
  QuoteVersionsPage,
  ReplaceLineItemsDto,
  requestedMailLanguage,
  SendQuoteDto,
  UpdateQuoteDto,
} from './quote.dto';

/** `If-Match: "3-1767225600000"`, a list of them, or `*`. */
export function parseIfMatch(header: string | undefined): IfMatch {
  if (header === undefined || header.trim() === '') return null;
  return header.split(',').map((tag) => tag.trim()).filter(Boolean);
}

const IF_MATCH = ApiHeader({ name: 'If-Match', required: false, description: 'The ETag of GET /quotes/{id}; the write is refused with 412 precondition_failed when the quote changed since.' });

@ApiTags('quotes')
@ApiBearerAuth('apiKey')
@UseGuards(ApiKeyGuard)
@Controller('api/v1')
export class QuotesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QuoteQueries,
    private readonly pdfs: QuotePdfs,
    private readonly mails: QuoteMailJobs,
    private readonly listResponses: ListResponses,
  ) {}

  @Post('submissions/:submissionId/quotes')
  @ApiOperation({
    summary: 'Create a draft quote for a submission',
    description:
      "Omitted terms default from the organization's quote settings and currency. Without `lineItems` the breakdown is the submission's frozen external pricing when its configHash matches the submission's, else its base pricing. The quote gets the next gap-free number `Q-<year>-<6 digits>` and the submission becomes `quoted`.",
  })
  @ApiBody({ type: CreateQuoteDto, required: false, description: 'Every field is optional; no body at all means all defaults.' })
  @ApiCreatedResponse({ type: QuoteIdResponse })
  async create(@CurrentCaller() caller: ApiCaller, @Param('submissionId') submissionId: string, @Body() body: CreateQuoteDto, @Req() httpRequest: FastifyRequest): Promise<QuoteIdResponse> {
    const quoteId = await this.commands.execute<CreateQuote, string>(
      new CreateQuote(
        caller.organizationId,
        submissionId,
        {
          taxRate: body.taxRate,
          validityDays: body.validityDays,
          currency: body.currency,
          reference: body.reference,
          notes: body.notes,
          lineItems: body.lineItems ? toQuoteLines(body.lineItems) : undefined,
        },
        caller.actor,
        idempotentId(httpRequest, 'quo'),
      ),
    );
    return { quoteId };
  }

  @Get('quotes')
  @ApiOperation({ summary: 'List quotes, newest first' })
  @ApiOkResponse({ type: QuoteListPage })
  async list(@CurrentCaller() caller: ApiCaller, @Query() query: ListQuotesQuery, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const token = this.queries.listChangeToken();
    const page = await this.queries.list({ organizationId: caller.organizationId, status: query.status, submissionId: query.submissionId, limit: pageLimit(query), cursor: query.cursor });
    const body = pageJson(page);
    // Until the quotes read model changes, the same URL is answered with this body (ListResponses).
    this.listResponses.remember(caller.organizationId, request.url, request.routeOptions.url ?? 'unmatched', token, () => this.queries.listChangeToken(), body);
    reply.type('application/json; charset=utf-8');
    return body;
  }

  @Get('quotes/:quoteId')
  @ApiOperation({ summary: 'Read a quote with notes, line items and pdf', description: 'The `ETag` header identifies this version of the quote for `If-Match`. `pdf` is the PDF of the current version: its status and, when ready, a signed link valid for 5 minutes, fresh on every read.' })
  @ApiOkResponse({ type: QuoteDetailView, headers: { ETag: { description: '"<version>-<updatedAt>"', schema: { type: 'string' } } } })
  async get(@CurrentCaller() caller: ApiCaller, @Param('quoteId') quoteId: string, @Res({ passthrough: true }) reply: FastifyReply) {
    const quote = await this.queries.get(caller.organizationId, quoteId);
    reply.header('ETag', quoteETag(quote));
    return toQuoteDetail(quote, await this.pdfs.view(quote.id, quote.version));
  }

  @Patch('quotes/:quoteId')
  @ApiOperation({
    summary: 'Change terms and/or externalRef',
    description:
      'A draft changes in place. A sent or viewed quote needs `revise: true`: the current version stays in the history and the next version is a draft (409 `revision_required` otherwise, nothing applied). Accepted, rejected and expired quotes answer 409 `quote_not_editable`. `externalRef` alone changes in every status without a new version.',
  })
  @IF_MATCH
  @ApiOkResponse({ type: QuoteVersionResponse })
  @ApiErrors('revision_required', 'quote_not_editable', 'precondition_failed', 'conflict')
  async update(
    @CurrentCaller() caller: ApiCaller,
    @Param('quoteId') quoteId: string,
    @Body() body: UpdateQuoteDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<QuoteVersionResponse> {
    const terms: Partial<QuoteTerms> = {};
    for (const field of TERM_FIELDS) if (body[field] !== undefined) Object.assign(terms, { [field]: body[field] });
    if (Object.keys(terms).length === 0 && body.externalRef === undefined) {
      throw new ValidationFailed([{ path: '', message: `send at least one of ${[...TERM_FIELDS, 'externalRef'].join(', ')}` }]);
    }
    const result = await this.commands.execute<ChangeQuote, QuoteVersionResult>(
      new ChangeQuote(caller.organizationId, quoteId, terms, body.externalRef, body.revise ?? false, parseIfMatch(ifMatch), caller.actor),
    );
    reply.header('ETag', result.etag);
    return { quoteId: result.quoteId, version: result.version };
  }

  @Put('quotes/:quoteId/line-items')
  @ApiOperation({
    summary: 'Replace the whole breakdown',
    description: 'Totals are recomputed server-side and the previous breakdown stays in the version history. Status rules as for PATCH.',
  })
  @IF_MATCH
  @ApiOkResponse({ type: QuoteLineItemsResponse })
  @ApiErrors('revision_required', 'quote_not_editable', 'precondition_failed', 'conflict')
  async replaceLineItems(
    @CurrentCaller() caller: ApiCaller,
    @Param('quoteId') quoteId: string,
    @Body() body: ReplaceLineItemsDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<QuoteLineItemsResponse> {
    const { etag, ...result } = await this.commands.execute<ReplaceQuoteLineItems, QuoteVersionResult & QuoteLineItemsResponse>(
      new ReplaceQuoteLineItems(
        caller.organizationId,
        quoteId,
        toQuoteLines(body.lineItems),
        body.revise ?? false,
        body.changeDescription || null,
        parseIfMatch(ifMatch),
        caller.actor,
      ),
    );
    reply.header('ETag', etag);
    return result;
  }

  @Post('quotes/:quoteId/send')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send the quote to the customer',
    description:
      'From draft or sent (a re-send). Emits `quote.sent` and e-mails the recipients a link to the quote; validUntil is recomputed from the send. Other statuses answer 409 `quote_not_sendable`.',
  })
  @IF_MATCH
  @ApiOkResponse({ type: QuoteSentResponse })
  @ApiErrors('quote_not_sendable', 'precondition_failed', 'conflict')
  async send(
    @CurrentCaller() caller: ApiCaller,
    @Param('quoteId') quoteId: string,
    @Body() body: SendQuoteDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<QuoteSentResponse> {
    // The same address twice (in any case) gets one mail; the first spelling is kept.
    const seen = new Set<string>();
    const recipients = body.recipients.filter((email) => !seen.has(email.toLowerCase()) && seen.add(email.toLowerCase()));
    const result = await this.commands.execute<SendQuote, SentQuote>(
      new SendQuote(caller.organizationId, quoteId, recipients, requestedMailLanguage(body.locale), parseIfMatch(ifMatch), caller.actor, idempotentId(request, 'send')),
    );
    reply.header('ETag', result.etag);
    return { quoteId: result.quoteId, status: result.status, sentAt: result.sentAt };
  }

  @Get('quotes/:quoteId/versions')
  @ApiOperation({
    summary: 'Version history, newest first',
    description:
      'Every state of the quote content: the current one first, then each earlier version as it was sent (or last stood) and each breakdown replaced in a draft.',
  })
  @ApiOkResponse({ type: QuoteVersionsPage })
  async versions(@CurrentCaller() caller: ApiCaller, @Param('quoteId') quoteId: string, @Query() query: PageQuery) {
    return this.queries.versions(caller.organizationId, quoteId, { limit: pageLimit(query), cursor: query.cursor });
  }

  @Get('quotes/:quoteId/emails')
  @ApiOperation({
    summary: 'E-mails of the quote, newest first',
    description:
      'One entry per send: recipients, language, delivery status (`pending` → `sending` → `sent`, or `failed` after the last retry), attempts and the last error. Failed attempts are retried on MAIL_RETRY_SCHEDULE_MS; nothing is dropped silently.',
  })
  @ApiOkResponse({ type: QuoteMailsPage })
  @ApiErrors('not_found')
  async emails(@CurrentCaller() caller: ApiCaller, @Param('quoteId') quoteId: string, @Query() query: PageQuery) {
    await this.queries.get(caller.organizationId, quoteId);
    const list = `quote-emails:${quoteId}`;
    const { items, nextAfter } = await this.mails.listForQuote(quoteId, pageLimit(query), decodeCursor(list, query.cursor));
    return { data: items.map(toMailDelivery), nextCursor: nextAfter ? encodeCursor(list, nextAfter) : null };
  }
}
