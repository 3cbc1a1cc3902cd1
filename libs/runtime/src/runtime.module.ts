import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { ActiveProjectionReadStore, AggregateRepository, ReadYourWrites } from '@lib/event-sourcing';
import { EventStore, EventStoreDbEventStore, SqliteEventStore } from '@lib/event-store';
import { KafkaMessageBus, MessageBus, SqliteMessageBus } from '@lib/message-bus';
import { MongoReadStore, ReadStore, SqliteReadStore } from '@lib/read-store';
import { APP_CONFIG, Clock, ConfigError, IdGenerator, RandomIdGenerator, SystemClock, type AppConfig } from '@lib/shared';
import { ProjectionRegistry } from './projection-registry';
import { ReactorRegistry } from './reactor-registry';

function ensureDataDir(config: AppConfig): string {
  mkdirSync(config.dataDir, { recursive: true });
  return config.dataDir;
}

/** A malformed connection string stops start-up with a line naming the variable (decisions §1). */
function connectEventStoreDb(url: string): EventStoreDbEventStore {
  try {
    return EventStoreDbEventStore.connect({ url });
  } catch (error) {
    throw new ConfigError('EVENTSTORE_URL', `is not an EventStoreDB connection string (esdb://…): ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The event store the configuration names (EventStoreDB or the embedded file); the apps and the CLI open it the same way. */
export function openEventStore(config: AppConfig): EventStore {
  return config.eventStoreUrl ? connectEventStoreDb(config.eventStoreUrl) : new SqliteEventStore({ file: join(ensureDataDir(config), 'events.db') });
}

/**
 * The read store the configuration names (MongoDB or the embedded file), serving each
 * projection's active generation (see ActiveProjectionReadStore); the apps and the CLI open it
 * the same way.
 */
export async function openReadStore(config: AppConfig): Promise<ActiveProjectionReadStore> {
  const engine = config.mongodbUrl ? await MongoReadStore.connect({ url: config.mongodbUrl }) : new SqliteReadStore({ file: join(ensureDataDir(config), 'read-models.db') });
  return new ActiveProjectionReadStore(engine);
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
      useFactory: async (config: AppConfig): Promise<MessageBus> =>
        config.kafkaBrokers
          ? KafkaMessageBus.connect({
              brokers: config.kafkaBrokers,
              clientId: config.kafkaClientId,
              topicPrefix: config.kafkaTopicPrefix,
              partitions: config.kafkaTopicPartitions,
              replicationFactor: config.kafkaReplicationFactor,
              retentionMs: config.kafkaRetentionMs,
            })
          : new SqliteMessageBus({ file: join(ensureDataDir(config), 'bus.db') }),
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
