import type { CanActivate, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Refuses a write request before anything is written while `beforeWrite` throws: the gateway's
 * read side is known to be behind (ReadYourWrites.assertKeepingUp), so the write would be stored
 * and then answered 503 after the full wait for it. Refused here, nothing is stored and a retry is
 * safe, with or without an Idempotency-Key. A global guard after IdempotencyGuard, so a retry
 * whose answer is stored gets its replay. Writes the product makes itself (reactors, the expiry
 * check, the pricing finalizer) do not pass here: they are not refused, they wait.
 */
export class WriteGate implements CanActivate {
  constructor(private readonly beforeWrite: () => void) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() === 'http' && WRITE_METHODS.has(context.switchToHttp().getRequest<FastifyRequest>().method)) this.beforeWrite();
    return true;
  }
}
