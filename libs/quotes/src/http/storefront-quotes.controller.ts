import { Body, Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiErrors, idempotentId } from '@lib/http';
import { OrganizationDirectory } from '@lib/organizations';
import { QuotePdfs } from '../documents/quote-pdfs';
import { sendPdf } from './quote-files.controller';
import { AcceptQuote, RejectQuote, ViewQuote } from '../application/quote.commands';
import { QuoteQueries, toCustomerQuote, type CustomerQuote } from '../application/quote-queries';
import { QuoteNotFound } from '../domain/quote.errors';
import { CustomerQuoteView, CustomerResponseDto } from './quote.dto';

/** Tokens are 43 base62 characters; anything else cannot be a quote link. */
const TOKEN = /^[0-9A-Za-z]{43}$/;

/**
 * The customer's side of a quote (decisions §6). The token in the path is the only credential:
 * it came in the quote e-mail (`{PUBLIC_BASE_URL}/q/{quoteToken}`).
 */
@ApiTags('storefront')
@Controller('storefront/v1/quotes')
export class StorefrontQuotesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QuoteQueries,
    private readonly organizations: OrganizationDirectory,
    private readonly pdfs: QuotePdfs,
  ) {}

  @Get(':quoteToken')
  @ApiOperation({
    summary: 'The quote as sent to the customer',
    description: 'The version last sent, with its live status. The first view (GET) of a sent quote moves it to `viewed`; a HEAD, which shows nothing to anyone (a link checker), does not.',
  })
  @ApiOkResponse({ type: CustomerQuoteView })
  async view(@Param('quoteToken') token: string, @Req() request: FastifyRequest): Promise<CustomerQuote> {
    const link = await this.find(token);
    if (link.status === 'sent' && request.method === 'GET') await this.commands.execute(new ViewQuote(token));
    return this.render(token);
  }

  @Post(':quoteToken/accept')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Accept the quote',
    description: 'Only a sent or viewed quote that has not expired, and only the `version` the customer saw when given (409 `quote_not_actionable`). Closes the submission.',
  })
  @ApiOkResponse({ type: CustomerQuoteView })
  @ApiErrors('quote_not_actionable')
  async accept(@Param('quoteToken') token: string, @Body() body: CustomerResponseDto, @Req() request: FastifyRequest): Promise<CustomerQuote> {
    await this.commands.execute(new AcceptQuote(token, body.name ?? null, body.version, idempotentId(request, 'answer')));
    return this.render(token);
  }

  @Post(':quoteToken/reject')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Reject the quote',
    description: 'Only a sent or viewed quote that has not expired, and only the `version` the customer saw when given (409 `quote_not_actionable`).',
  })
  @ApiOkResponse({ type: CustomerQuoteView })
  @ApiErrors('quote_not_actionable')
  async reject(@Param('quoteToken') token: string, @Body() body: CustomerResponseDto, @Req() request: FastifyRequest): Promise<CustomerQuote> {
    await this.commands.execute(new RejectQuote(token, body.name ?? null, body.reason ?? null, body.version, idempotentId(request, 'answer')));
    return this.render(token);
  }

  @Get(':quoteToken/pdf')
  @ApiOperation({
    summary: 'The PDF of the current version',
    description:
      'The PDF of the version last sent to the customer (a draft revision stays unseen until it is sent). 404 `not_found` for an unknown token, and while the PDF is still being made. Does not count as a view.',
  })
  @ApiOkResponse({ description: 'the PDF', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors('not_found')
  async pdf(@Param('quoteToken') token: string, @Res() reply: FastifyReply): Promise<void> {
    const link = await this.find(token);
    sendPdf(reply, await this.pdfs.file(link.quoteId, link.offer.version));
  }

  private async find(token: string) {
    const link = TOKEN.test(token) ? await this.queries.findLink(token) : null;
    if (!link) throw new QuoteNotFound();
    return link;
  }

  private async render(token: string): Promise<CustomerQuote> {
    const link = await this.find(token);
    const organization = await this.organizations.get(link.organizationId);
    return toCustomerQuote(link, organization);
  }
}
