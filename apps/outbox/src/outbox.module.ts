import { Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { matches } from '@lib/event-sourcing';
import { EventStore, type RecordedEvent, type Subscription } from '@lib/event-store';
import { MessageBus, type Consumer } from '@lib/message-bus';
import { Metrics, Readiness } from '@lib/observability';
import { ReadStore } from '@lib/read-store';
import { QUOTE_MAILS, QUOTE_PDFS, QuoteDocumentsWorkerModule, QuoteExpiryModule } from '@lib/quotes';
import { DOMAIN_EVENTS_TOPIC, RELAY_CHECKPOINT, ReactorRegistry } from '@lib/runtime';
import { DELIVERIES, WebhookDispatchModule } from '@lib/webhooks';

export { DOMAIN_EVENTS_TOPIC } from '@lib/runtime';
const OUTBOX_GROUP = 'outbox';

/**
 * The outbox process. A relay copies the event store to the bus (keyed by stream, so each
 * aggregate stays in order) and advances its checkpoint only after the bus has accepted the
 * event; a consumer group hands each event to the registered reactors and commits only after
 * they finish. Side effects therefore happen here and nowhere else, at least once.
 */
@Module({ imports: [QuoteExpiryModule, QuoteDocumentsWorkerModule, WebhookDispatchModule] })
export class OutboxModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Outbox');
  private relay: Subscription | null = null;
  private consumer: Consumer | null = null;
  /** why the last publish to the bus failed; null once one succeeds (readiness) */
  private busFailure: string | null = null;

  constructor(
    private readonly events: EventStore,
    private readonly bus: MessageBus,
    private readonly reads: ReadStore,
    private readonly reactors: ReactorRegistry,
    private readonly metrics: Metrics,
    private readonly readiness: Readiness,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.metrics.readDeliveryDepthFrom(async () => ({
      pending: await this.reads.count(DELIVERIES, { status: 'pending' }),
      processing: await this.reads.count(DELIVERIES, { status: 'processing' }),
    }));
    this.metrics.readRelayPositionFrom(async () => {
      // The checkpoint before the head: a relay moving on meanwhile cannot seem past it.
      const relayed = (await this.reads.getCheckpoint(RELAY_CHECKPOINT)) ?? 0;
      return { relayed, head: await this.events.headPosition() };
    });
    this.metrics.readJobDepthFrom(() =>
      Promise.all(
        [['mail', QUOTE_MAILS], ['pdf', QUOTE_PDFS]].flatMap(([kind, collection]) =>
          ['pending', 'working', 'failed'].map(async (status) => ({ kind, status, count: await this.reads.count(collection, { status }) })),
        ),
      ),
    );
    // The relay and the reactors need the bus: it must answer now, and the relay's last publish must have succeeded.
    this.readiness.register('messageBus', async () => {
      if (this.busFailure) return `publishing to the bus failed: ${this.busFailure}`;
      await this.bus.probe();
      return null;
    });
    const after = (await this.reads.getCheckpoint(RELAY_CHECKPOINT)) ?? 0;
    this.relay = this.events.subscribeToAll({
      after,
      // A page of the log at a time: one publish and one checkpoint for all of its events.
      handleBatch: async (events) => {
        try {
          await this.bus.publish(DOMAIN_EVENTS_TOPIC, events.map((event) => ({ key: event.streamId, value: JSON.stringify(event) })));
          this.busFailure = null;
        } catch (error) {
          this.busFailure = error instanceof Error ? error.message : String(error);
          throw error;
        }
        await this.reads.saveCheckpoint(RELAY_CHECKPOINT, events[events.length - 1].position);
      },
      onError: (error) => this.logger.error(`relay failed; retrying: ${String(error)}`),
    });
    this.consumer = await this.bus.consume({
      groupId: OUTBOX_GROUP,
      topics: [DOMAIN_EVENTS_TOPIC],
      // Streams of a batch run side by side, each in its own order: reactors writing in the same
      // turn share one transaction instead of queueing one turn per event.
      handleBatch: async (messages) => {
        const byStream = new Map<string, RecordedEvent[]>();
        for (const message of messages) {
          const event = JSON.parse(message.value) as RecordedEvent;
          byStream.set(message.key, [...(byStream.get(message.key) ?? []), event]);
        }
        // Settle every stream before failing, so a retried batch never overlaps a running one.
        const outcomes = await Promise.allSettled(
          [...byStream.values()].map(async (events) => {
            for (const event of events) await this.dispatch(event);
          }),
        );
        const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
        if (failed) throw failed.reason;
      },
      onError: (error) => this.logger.error(`reactor failed; the batch will be retried: ${String(error)}`),
    });
    this.logger.log(`relaying from position ${after}; reactors: ${this.reactors.all().map((r) => r.name).join(', ') || 'none'}`);
  }

  private async dispatch(event: RecordedEvent): Promise<void> {
    for (const reactor of this.reactors.all()) {
      if (matches(reactor.filter, event)) await reactor.react(event);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.relay?.stop();
    await this.consumer?.stop();
  }
}
