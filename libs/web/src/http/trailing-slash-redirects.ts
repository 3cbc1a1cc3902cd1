import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The customer pages' addresses with a trailing slash; the last segment is the one redirected to. */
const PAGES_WITH_TRAILING_SLASH = ['/q/:page/', '/c/:page/', '/c/:orgSlug/:page/', '/contact/:page/'];

/**
 * A page's address with a trailing slash (a link a mail client or a person edited) is redirected
 * to the page: served there, its relative asset paths would miss, and the customer saw the API's
 * JSON 404 (2026-11-27, found by a review). The query stays; the Location is relative, so a path
 * prefix in front of the service is kept. Registered on Fastify itself: Nest drops a route's
 * trailing slash, which would make these the pages' own routes.
 */
@Injectable()
export class TrailingSlashRedirects implements OnModuleInit {
  constructor(private readonly adapter: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapter.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    for (const url of PAGES_WITH_TRAILING_SLASH) fastify.get(url, redirect);
  }
}

function redirect(request: FastifyRequest<{ Params: { page: string } }>, reply: FastifyReply): void {
  const query = request.url.indexOf('?');
  const location = `../${encodeURIComponent(request.params.page)}${query >= 0 ? request.url.slice(query) : ''}`;
  void reply.status(308).header('Location', location).header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer').send();
}
