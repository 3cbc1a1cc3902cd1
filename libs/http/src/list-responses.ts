import { Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LruMap } from '@lib/shared';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Pages kept at most; a page of 50 quotes is ~30 KB. */
const CAPACITY = 256;

interface Remembered {
  /** encoded once: answering sends these bytes as they are */
  body: Buffer;
  /** the read model's change token when the page was read */
  token: string;
  /** the read model's change token now */
  currentToken: () => string | null;
}

/**
 * Bodies of external-API list responses, kept per organization and request URL together with the
 * change token (ReadStore.changeToken) that the read model had before the page was read. A GET for
 * the same URL by the same organization is answered with the kept body while that token is
 * unchanged, i.e. nothing was written to the read model since: it would read the same page.
 *
 * The answer comes from a Fastify preHandler (registerListResponses), so the request has been
 * logged, authenticated and counted against its rate limit like any other; what it skips is Nest's
 * route pipeline (guards, pipes, parameter resolution) and the query. Only a URL whose response
 * was once produced by its handler (so its query passed validation) is kept, and nothing is kept
 * from a read model that gives no token (MongoDB).
 */
@Injectable()
export class ListResponses {
  private readonly pages = new LruMap<string, Remembered>(CAPACITY);

  /** `token` must be read before the page is: a write in between then makes the page miss. */
  remember(organizationId: string, url: string, token: string | null, currentToken: () => string | null, body: string): void {
    if (token === null) return;
    this.pages.set(keyOf(organizationId, url), { body: Buffer.from(body, 'utf8'), token, currentToken });
  }

  /** The kept body for this request, or null when there is none or the read model has changed. */
  answer(organizationId: string, url: string): Buffer | null {
    const key = keyOf(organizationId, url);
    const page = this.pages.get(key);
    if (page === undefined) return null;
    if (page.currentToken() === page.token) return page.body;
    this.pages.delete(key);
    return null;
  }
}

const keyOf = (organizationId: string, url: string) => `${organizationId} ${url}`;

/**
 * Answers GETs of the external API from ListResponses. Runs after the onRequest hooks (request
 * id and log, authentication, rate limit), and only for a caller that ApiKeyGuard would let read.
 */
export function registerListResponses(fastify: FastifyInstance, pages: ListResponses): void {
  fastify.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const caller = request.caller;
    if (request.method !== 'GET' || caller?.kind !== 'apiKey' || !caller.planAllowsApi) return done();
    const body = pages.answer(caller.organizationId, request.url);
    if (body === null) return done();
    reply.type(JSON_TYPE).send(body);
  });
}
