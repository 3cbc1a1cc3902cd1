import { Global, Module } from '@nestjs/common';
import { ActiveProjectionReadStore } from '@lib/event-sourcing';
import { ReadStore } from '@lib/read-store';
import { MongoReadStore } from '@lib/read-store/mongo-read-store';
import { AdminGuard, ApiKeyGuard } from './auth';
import { IdempotencyStore, InMemoryIdempotencyStore } from './idempotency';
import { ListResponses } from './list-responses';
import { MongoIdempotencyStore, MongoRateLimiter } from './mongo-gateway-state';
import { InMemoryRateLimiter, RateLimiter } from './rate-limit';

/** The MongoDB adapter behind the read store the app uses (which serves active projection generations), if it is one. */
function mongoBehind(reads: ReadStore): MongoReadStore | null {
  const adapter = reads instanceof ActiveProjectionReadStore ? reads.engine : reads;
  return adapter instanceof MongoReadStore ? adapter : null;
}

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
    ListResponses,
    {
      provide: RateLimiter,
      inject: [ReadStore],
      useFactory: (reads: ReadStore) => {
        const mongo = mongoBehind(reads);
        return mongo ? new MongoRateLimiter(mongo.database) : new InMemoryRateLimiter();
      },
    },
    {
      provide: IdempotencyStore,
      inject: [ReadStore],
      useFactory: (reads: ReadStore) => {
        const mongo = mongoBehind(reads);
        return mongo ? new MongoIdempotencyStore(mongo.database) : new InMemoryIdempotencyStore();
      },
    },
  ],
  exports: [ApiKeyGuard, AdminGuard, ListResponses, RateLimiter, IdempotencyStore],
})
export class HttpInfrastructureModule {}
