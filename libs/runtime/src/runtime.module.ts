import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { AggregateRepository, ReadYourWrites } from '@lib/event-sourcing';
import { EventStore } from '@lib/event-store';
import { MessageBus } from '@lib/message-bus';
import { ReadStore } from '@lib/read-store';
import { APP_CONFIG, Clock, IdGenerator, RandomIdGenerator, SystemClock, type AppConfig } from '@lib/shared';
import { ProjectionRegistry } from './projection-registry';
import { ReactorRegistry } from './reactor-registry';
import { openEventStore, openMessageBus, openReadStore } from './stores';

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
      inject: [APP_CONFIG, ReadYourWrites],
      useFactory: async (config: AppConfig, readYourWrites: ReadYourWrites) => {
        const store = await openReadStore(config);
        store.followConfirmedWrites((projection) => readYourWrites.progressOf(projection));
        return store;
      },
    },
    {
      provide: MessageBus,
      inject: [APP_CONFIG],
      useFactory: openMessageBus,
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
