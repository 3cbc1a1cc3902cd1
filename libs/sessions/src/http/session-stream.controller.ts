import type { OutgoingHttpHeaders } from 'node:http';
import { Controller, Get, Inject, Optional, Param, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiErrors, bearerToken } from '@lib/http';
import { countWhenClosed, Metrics } from '@lib/observability';
import { Unauthorized } from '@lib/shared';
import { SessionReader } from '../application/session-reader';
import { EVENT_STREAM_HEADERS, SessionEventStreams } from '../live/session-event-streams';

/**
 * decisions §6: the customer's live view of the session. EventSource cannot send headers, so the
 * customer token may come as `?token=` here (and only here).
 */
@ApiTags('storefront')
@ApiBearerAuth('customerToken')
@Controller('storefront/v1/sessions/:sessionId/stream')
export class SessionStreamController {
  constructor(
    private readonly sessions: SessionReader,
    private readonly streams: SessionEventStreams,
    @Optional() @Inject(Metrics) private readonly metrics: Metrics | null = null,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'Follow the session live (Server-Sent Events)',
    description:
      '`event: session` with the session object (as GET /storefront/v1/sessions/{sessionId}) at once and after every change: configuration, external price, submit, the end of the live-pricing wait, expiry. Comment lines are heartbeats. ' +
      'The stream ends after pushing the expiry; a stream asked for an expired session answers 204 (EventSource then stops reconnecting). ' +
      'At most 10 streams of one session are open at a time: 429 `rate_limited` beyond.',
  })
  @ApiProduces('text/event-stream')
  @ApiQuery({ name: 'token', required: false, description: 'The customer token, for clients that cannot send `Authorization` (EventSource)' })
  @ApiOkResponse({ description: 'A text/event-stream that stays open', content: { 'text/event-stream': { schema: { type: 'string' } } } })
  @ApiNoContentResponse({ description: 'The session has expired: nothing more to follow' })
  @ApiErrors('unauthorized', 'rate_limited')
  async stream(
    @Param('sessionId') sessionId: string,
    @Query('token') queryToken: string | string[] | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (Array.isArray(queryToken)) throw new Unauthorized('The customer token was given more than once (?token=).');
    const document = await this.sessions.authorize(sessionId, bearerToken(request) ?? (typeof queryToken === 'string' ? queryToken : null));
    // An expired session changes no more: 204 tells EventSource not to reconnect (the stream that
    // was open pushed the expiry, then ended).
    if (this.sessions.isExpired(document)) return void reply.status(204).send();
    if (request.method !== 'HEAD') this.streams.admit(sessionId);
    // From here on the response is ours: Fastify must neither send nor time it out, nor count it in
    // the request metrics (its onResponse hook runs only if the server ends the stream), so the
    // stream is counted when it ends, once (countWhenClosed).
    reply.hijack();
    if (this.metrics) countWhenClosed(this.metrics, request, reply);
    // A HEAD has no body to stream: the headers a GET starts with (no length), and the end. Node
    // sends a HEAD's headers only when the response ends, so a stream would never answer it.
    if (request.method === 'HEAD') {
      reply.raw.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), ...EVENT_STREAM_HEADERS }).end();
      return;
    }
    await this.streams.serve(sessionId, reply.raw, reply.getHeaders() as OutgoingHttpHeaders);
  }
}
