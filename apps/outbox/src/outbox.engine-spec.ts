import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Module, OnModuleInit, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ObservabilityModule } from '@lib/observability';
import { DomainModule } from '@lib/bootstrap';
import { EventStore } from '@lib/event-store';
import { ConfigModule, ReactorRegistry, RuntimeModule } from '@lib/runtime';
import { loadConfig, type AppConfig } from '@lib/shared';
import { deleteKafkaPrefix } from '@lib/message-bus/testing/kafka-cleanup';
import { waitFor } from '@lib/shared/testing/processes';
import { OutboxModule } from './outbox.module';

interface Reaction {
  outbox: string;
  streamId: string;
  revision: number;
}

/**
 * Several outbox processes on one Kafka consumer group (`KAFKA_BROKERS` required), sharing the
 * embedded event and read stores of one DATA_DIR as separate processes would.
 */
describe('outbox processes in one Kafka consumer group', () => {
  const brokers = process.env.KAFKA_BROKERS?.trim();
  let dataDir: string;
  let config: AppConfig;
  const reactions: Reaction[] = [];
  const running: INestApplicationContext[] = [];

  beforeAll(() => {
    if (!brokers) throw new Error('KAFKA_BROKERS is not set: run scripts/engines/kafka.sh start and set KAFKA_BROKERS=127.0.0.1:19092');
    dataDir = mkdtempSync(join(tmpdir(), 'outbox-kafka-'));
    config = loadConfig({
      DATA_DIR: dataDir,
      ADMIN_TOKEN: 'adm_test_token_0123456789_padded_to_32_chars',
      SEED_DEMO: 'false',
      KAFKA_BROKERS: brokers,
      KAFKA_TOPIC_PREFIX: `outbox-spec-${randomUUID().slice(0, 8)}.`,
    });
  });
  afterAll(async () => {
    await Promise.all(running.splice(0).map((app) => app.close()));
    if (config) await deleteKafkaPrefix(config.kafkaBrokers!, config.kafkaTopicPrefix);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** An outbox process whose one extra reactor records which process saw which event. */
  async function startOutbox(name: string): Promise<INestApplicationContext> {
    @Injectable()
    class Recorder implements OnModuleInit {
      constructor(private readonly reactors: ReactorRegistry) {}
      onModuleInit(): void {
        this.reactors.register({
          name: 'recorder',
          filter: { streamPrefixes: ['probe-'] },
          react: async (event) => {
            // A little work per event, so batches overlap the rebalances.
            await new Promise((resolve) => setTimeout(resolve, 1));
            reactions.push({ outbox: name, streamId: event.streamId, revision: event.revision });
          },
        });
      }
    }
    @Module({ providers: [Recorder] })
    class RecorderModule {}
    @Module({})
    class OutboxApp {
      static forRoot(appConfig: AppConfig): DynamicModule {
        return { module: OutboxApp, imports: [ConfigModule.forRoot(appConfig), RuntimeModule, ObservabilityModule.forRoot({ projectionsMustBeCurrent: false }), DomainModule, OutboxModule, RecorderModule] };
      }
    }
    const app = await NestFactory.createApplicationContext(OutboxApp.forRoot(config), { logger: ['error'], abortOnError: false });
    running.push(app);
    return app;
  }

  it('split the partitions, and react to every event of each stream in order while one joins and another leaves', async () => {
    const streams = Array.from({ length: 12 }, (_, i) => `probe-${i}`);
    const first = await startOutbox('first');
    const events = first.get(EventStore);
    let appended = 0;
    const appendRound = async (store = events): Promise<void> => {
      for (const streamId of streams) await store.appendToStream(streamId, [{ type: 'probe.v1.happened', data: { n: appended } }], 'any');
      appended += 1;
    };
    const reactedBy = (outbox: string): number => reactions.filter((r) => r.outbox === outbox).length;

    for (let i = 0; i < 5; i++) await appendRound();
    await waitFor(() => reactedBy('first') > 0, 20_000);
    const second = await startOutbox('second');
    const appender = second.get(EventStore);
    while (reactedBy('second') === 0) {
      await appendRound();
      if (appended > 500) throw new Error('the second outbox never got a partition');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Both hold partitions now: one more round is split between them.
    const splitFrom = reactions.length;
    const splitRound = appended;
    await appendRound();
    await waitFor(() => streams.every((s) => reactions.some((r) => r.streamId === s && r.revision === splitRound)), 20_000);
    const splitOwners = new Set(reactions.slice(splitFrom).filter((r) => r.revision === splitRound).map((r) => r.outbox));

    // The first leaves while events keep coming; the second takes over its partitions.
    const stopping = first.close().then(() => running.splice(running.indexOf(first), 1));
    for (let i = 0; i < 5; i++) await appendRound(appender);
    await stopping;
    const afterLeaving = appended;
    await appendRound(appender);
    const lastRevision = appended - 1;
    await waitFor(() => streams.every((s) => reactions.some((r) => r.streamId === s && r.revision === lastRevision)), 30_000);

    expect(splitOwners).toEqual(new Set(['first', 'second']));
    for (const streamId of streams) {
      // At least once, in order: when an event is reacted to, every earlier one of its stream was.
      let highest = -1;
      for (const { revision } of reactions.filter((r) => r.streamId === streamId)) {
        expect(revision).toBeLessThanOrEqual(highest + 1);
        highest = Math.max(highest, revision);
      }
      expect(highest).toBe(lastRevision);
    }
    expect(new Set(reactions.filter((r) => r.revision === afterLeaving).map((r) => r.outbox))).toEqual(new Set(['second']));
  });
});
