import { Global, Module } from '@nestjs/common';
import { MongoReadStore, ReadStore } from '@lib/read-store';
import { AdminGuard, ApiKeyGuard } from './auth';
import { IdempotencyStore, InMemoryIdempotencyStore } from './idempotency';
import { MongoIdempotencyStore, MongoRateLimiter } from './mongo-gateway-state';
import { InMemoryRateLimiter, RateLimiter } from './rate-limit';

/**
 * Cross-cutting HTTP services. With MongoDB configured (MONGODB_URL), rate limits and idempotency
 * keys live in its database beside the read models, so every gateway instance shares them;
 * otherwise in this process's memory.
 */
@Global()
@Module({
  providers: [
    ApiKeyGuard,
    AdminGuard,
    {
      provide: RateLimiter,
      inject: [ReadStore],
      useFactory: (reads: ReadStore) => (reads instanceof MongoReadStore ? new MongoRateLimiter(reads.database) : new InMemoryRateLimiter()),
    },
    {
      provide: IdempotencyStore,
      inject: [ReadStore],
      useFactory: (reads: ReadStore) => (reads instanceof MongoReadStore ? new MongoIdempotencyStore(reads.database) : new InMemoryIdempotencyStore()),
    },
  ],
  exports: [ApiKeyGuard, AdminGuard, RateLimiter, IdempotencyStore],
})
export class HttpInfrastructureModule {}
