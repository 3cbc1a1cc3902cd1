import { join } from 'node:path';
import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { ActiveProjectionReadStore } from '@lib/event-sourcing';
import { ReadStore } from '@lib/read-store';
import { MongoReadStore } from '@lib/read-store/mongo-read-store';
import { EMBEDDED_FILES } from '@lib/runtime/stores';
import { APP_CONFIG, type AppConfig } from '@lib/shared';
import { AdminGuard, ApiKeyGuard } from './auth';
import { BeforeBodyChecks } from './before-body';
import { IdempotencyStore } from './idempotency';
import { ListResponses } from './list-responses';
import { MongoIdempotencyStore, MongoRateLimiter } from './mongo-gateway-state';
import { InMemoryRateLimiter, RateLimiter } from './rate-limit';
import { SqliteIdempotencyStore } from './sqlite-idempotency-store';

/** The MongoDB adapter behind the read store the app uses (which serves active projection generations), if it is one. */
function mongoBehind(reads: ReadStore): MongoReadStore | null {
  const adapter = reads instanceof ActiveProjectionReadStore ? reads.engine : reads;
  return adapter instanceof MongoReadStore ? adapter : null;
}

/**
 * Cross-cutting HTTP services. With MongoDB configured (MONGODB_URL), rate limits and idempotency
 * keys live in its database beside the read models, so every gateway instance shares them.
 * Otherwise rate limits are counted in this process's memory, and idempotency keys are kept in
 * their own SQLite file in DATA_DIR: a retry after a restart must still be replayed, not run again.
 */
@Global()
@Module({
  providers: [
    ApiKeyGuard,
    AdminGuard,
    ListResponses,
    BeforeBodyChecks,
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
      inject: [ReadStore, APP_CONFIG],
      useFactory: (reads: ReadStore, config: AppConfig) => {
        const mongo = mongoBehind(reads);
        return mongo ? new MongoIdempotencyStore(mongo.database) : new SqliteIdempotencyStore({ file: join(config.dataDir, EMBEDDED_FILES.idempotency) });
      },
    },
  ],
  exports: [ApiKeyGuard, AdminGuard, ListResponses, BeforeBodyChecks, RateLimiter, IdempotencyStore],
})
export class HttpInfrastructureModule implements OnApplicationShutdown {
  constructor(@Inject(IdempotencyStore) private readonly idempotency: IdempotencyStore) {}

  /** Closes the embedded file this module opened; MongoDB's connection belongs to the read store. */
  async onApplicationShutdown(): Promise<void> {
    if (this.idempotency instanceof SqliteIdempotencyStore) await this.idempotency.close();
  }
}
