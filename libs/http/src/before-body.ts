import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * A check of a route's caller that needs only the request line and headers; it throws the
 * refusal. It runs before the body is read, so a caller the route refuses gets that refusal, not
 * a 400, 413, 415 or 422 about a body it may not send here (decisions §8 checks the capability
 * token, the plan, the session and the window before the body), and no body of a refused caller
 * is read at all.
 */
export type BeforeBodyCheck = (request: FastifyRequest) => Promise<void>;

/** The before-body checks of the routes that have one, by method and route as Fastify names it (`/api/v1/x/:id`). */
@Injectable()
export class BeforeBodyChecks {
  private readonly checks = new Map<string, BeforeBodyCheck>();

  register(method: string, route: string, check: BeforeBodyCheck): void {
    const key = `${method} ${route}`;
    if (this.checks.has(key)) throw new Error(`a before-body check of ${key} is registered twice`);
    this.checks.set(key, check);
  }

  of(method: string, route: string): BeforeBodyCheck | undefined {
    return this.checks.get(`${method} ${route}`);
  }
}
