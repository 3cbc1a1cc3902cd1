import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import { LruMap } from '@lib/shared';
import { authorizationHeader, bearerTokenOf, type ApiKeyIdentity } from './auth';
import { rateLimitHeaders, type RateDecision } from './rate-limit';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Pages kept at most; a page of 50 quotes is ~30 KB. */
const CAPACITY = 256;

interface Remembered {
  /** encoded once: answering sends these bytes as they are */
  body: Buffer;
  /** the route template that produced it (the metrics label of the answer) */
  route: string;
  /** the read model's change token when the page was read */
  token: string;
  /** the read model's change token now */
  currentToken: () => string | null;
}

export interface KeptPage {
  body: Buffer;
  route: string;
}

/**
 * Bodies of external-API list responses, kept per organization and request URL together with the
 * change token (ReadStore.changeToken) that the read model had before the page was read. A GET for
 * the same URL by the same organization is answered with the kept body while that token is
 * unchanged, i.e. nothing was written to the read model since: it would read the same page.
 *
 * The answer is given as the request arrives, before Fastify (EarlyListAnswers): the request is
 * authenticated, counted against its rate limit, logged and measured like any other, and what it
 * skips is the framework's request pipeline and the query. Only a URL whose response was once
 * produced by its handler (so its query passed validation) is kept, and nothing is kept from a
 * read model that gives no token (MongoDB).
 */
@Injectable()
export class ListResponses {
  private readonly pages = new LruMap<string, Remembered>(CAPACITY);

  /** `token` must be read before the page is: a write in between then makes the page miss. */
  remember(organizationId: string, url: string, route: string, token: string | null, currentToken: () => string | null, body: string): void {
    if (token === null) return;
    this.pages.set(keyOf(organizationId, url), { body: Buffer.from(body, 'utf8'), route, token, currentToken });
  }

  /** The kept page for this request, or null when there is none or the read model has changed. */
  answer(organizationId: string, url: string): KeptPage | null {
    const key = keyOf(organizationId, url);
    const page = this.pages.get(key);
    if (page === undefined) return null;
    if (page.currentToken() === page.token) return page;
    this.pages.delete(key);
    return null;
  }
}

const keyOf = (organizationId: string, url: string) => `${organizationId} ${url}`;

/** What answering a request before Fastify needs, each the same service or function the framework's path uses. */
export interface EarlyListAnswerServices {
  pages: ListResponses;
  /** the API key's identity when its resolution is kept (no read needed), else undefined */
  keptApiKey: (rawKey: string) => ApiKeyIdentity | null | undefined;
  /** counts a hit against the key's limit, synchronously; null when the key's limit is off */
  rateLimit: (keyId: string) => RateDecision | null;
  requestId: (request: IncomingMessage) => string;
  /** called once the response is handed to the socket (log line, metrics) */
  answered: (request: IncomingMessage, requestId: string, page: KeptPage, statusCode: number, elapsedMs: number) => void;
}

/**
 * Answers repeated list GETs of the external API from ListResponses as they arrive at the HTTP
 * server, before Fastify builds its request, which saves the framework's request pipeline on
 * each (measured in docs/benchmarks.md, fourth round). Everything the framework's path would do for
 * such a request is done here with the same services: the key is resolved and checked as
 * ApiKeyGuard checks it, the hit is counted against the key's rate limit, the response carries
 * the same headers, and it is logged and measured under its route. Anything else (another
 * method, a key whose resolution is not kept, a page not kept, a hit over the rate limit, a
 * closing server) goes to Fastify untouched.
 */
export class EarlyListAnswers {
  private services: EarlyListAnswerServices | null = null;
  private closing = false;

  /** Until this is called, every request goes to Fastify. */
  enable(services: EarlyListAnswerServices): void {
    this.services = services;
  }

  /** From now on every request goes to Fastify (which answers 503 while it closes). */
  close(): void {
    this.closing = true;
  }

  /** true: answered here; false: Fastify must answer. */
  readonly answer = (request: IncomingMessage, response: ServerResponse): boolean => {
    const services = this.services;
    if (services === null || this.closing || request.method !== 'GET') return false;
    const started = performance.now();
    const url = request.url;
    if (url === undefined || !url.startsWith('/api/')) return false;
    const token = bearerTokenOf(authorizationHeader(request));
    if (token === null) return false;
    const caller = services.keptApiKey(token);
    // ApiKeyGuard's checks: a valid key of an organization whose plan includes the API; any key may read.
    if (!caller || !caller.planAllowsApi) return false;
    const page = services.pages.answer(caller.organizationId, url);
    if (page === null) return false;
    const decision = services.rateLimit(caller.keyId);
    // The framework refuses it with its envelope. Counting the hit again there changes nothing:
    // the window's count is past the limit either way.
    if (decision !== null && !decision.allowed) return false;
    const requestId = services.requestId(request);
    // The headers, and their order, that the framework's path sends for the same answer.
    response.writeHead(200, {
      'x-request-id': requestId,
      ...(decision === null ? {} : rateLimitHeaders(decision)),
      'content-type': JSON_TYPE,
      'content-length': page.body.length,
    });
    response.end(page.body);
    // Logged and measured at once rather than on the response's `close`: the whole body went to
    // the socket in `end`, and a listener per response and its tick cost more than the line.
    services.answered(request, requestId, page, 200, performance.now() - started);
    return true;
  };
}
