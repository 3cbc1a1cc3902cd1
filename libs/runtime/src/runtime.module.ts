import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { ActiveProjectionReadStore, AggregateRepository, ReadYourWrites } from '@lib/event-sourcing';
import { EventStore, SqliteEventStore } from '@lib/event-store';
import { MessageBus, SqliteMessageBus } from '@lib/message-bus';
import { ReadStore, SqliteReadStore } from '@lib/read-store';
import { APP_CONFIG, Clock, IdGenerator, RandomIdGenerator, SystemClock, type AppConfig } from '@lib/shared';
import { ProjectionRegistry } from './projection-registry';
import { ReactorRegistry } from './reactor-registry';

function ensureDataDir(config: AppConfig): string {
  mkdirSync(config.dataDir, { recursive: true });
  return config.dataDir;
}

/** The event store the configuration names; the apps and the CLI open it the same way. */
export function openEventStore(config: AppConfig): EventStore {
  return new SqliteEventStore({ file: join(ensureDataDir(config), 'events.db') });
}

/**
 * The read store the configuration names, serving each projection's active generation (see
 * ActiveProjectionReadStore); the apps and the CLI open it the same way.
 */
export function openReadStore(config: AppConfig): ActiveProjectionReadStore {
  return new ActiveProjectionReadStore(new SqliteReadStore({ file: join(ensureDataDir(config), 'read-models.db') }));
}

/**
 * The ports and the adapters behind them. Embedded SQLite files in DATA_DIR by default; the
 * real engines replace them when EVENTSTORE_URL / MONGODB_URL / KAFKA_BROKERS are set.
 */
@Global()
@Module({
  imports: [CqrsModule.forRoot()],
  providers: [
    { provide: Clock, useClass: SystemClock },
    { provide: IdGenerator, useClass: RandomIdGenerator },
    {
      provide: EventStore,
      inject: [APP_CONFIG],
      useFactory: openEventStore,
    },
    {
      provide: ReadStore,
      inject: [APP_CONFIG],
      useFactory: openReadStore,
    },
    {
      provide: MessageBus,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new SqliteMessageBus({ file: join(ensureDataDir(config), 'bus.db') }),
    },
    ReadYourWrites,
    AggregateRepository,
    ProjectionRegistry,
    ReactorRegistry,
  ],
  exports: [CqrsModule, Clock, IdGenerator, EventStore, ReadStore, MessageBus, ReadYourWrites, AggregateRepository, ProjectionRegistry, ReactorRegistry],
})
export class RuntimeModule implements OnApplicationShutdown {
  constructor(
    @Inject(EventStore) private readonly events: EventStore,
    @Inject(ReadStore) private readonly reads: ReadStore,
    @Inject(MessageBus) private readonly bus: MessageBus,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.bus.close();
    await this.reads.close();
    await this.events.close();
  }
}
