import { Global, Module } from '@nestjs/common';
import { AdminGuard, ApiKeyGuard } from './auth';
import { IdempotencyStore, InMemoryIdempotencyStore } from './idempotency';
import { InMemoryRateLimiter, RateLimiter } from './rate-limit';

/** Cross-cutting HTTP services. Shared-state adapters replace the in-memory ones when scaled out. */
@Global()
@Module({
  providers: [
    ApiKeyGuard,
    AdminGuard,
    { provide: RateLimiter, useClass: InMemoryRateLimiter },
    { provide: IdempotencyStore, useClass: InMemoryIdempotencyStore },
  ],
  exports: [ApiKeyGuard, AdminGuard, RateLimiter, IdempotencyStore],
})
export class HttpInfrastructureModule {}
