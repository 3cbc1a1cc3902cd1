import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Kafka, logLevel } from 'kafkajs';
import { describeMessageBusContract } from '@lib/message-bus/testing/message-bus.contract';
import { deleteKafkaPrefix } from '@lib/message-bus/testing/kafka-cleanup';
import { exited, firstLine, runTypeScript, waitFor } from '@lib/shared/testing/processes';
import { KafkaMessageBus, KafkaMessageBusOptions } from './kafka-message-bus';
import { BusMessage, ConsumedMessage, Consumer } from './message-bus.port';

/**
 * The message-bus contract and Kafka's own guarantees against a real broker:
 * `scripts/engines/kafka.sh start`, then
 * `KAFKA_BROKERS=127.0.0.1:19092 npx jest -c jest.engines.config.js libs/message-bus`.
 */
function brokers(): string[] {
  const raw = process.env.KAFKA_BROKERS?.trim();
  if (!raw) throw new Error('KAFKA_BROKERS is not set: run scripts/engines/kafka.sh start and set KAFKA_BROKERS=127.0.0.1:19092');
  return raw.split(',').map((broker) => broker.trim());
}

// Every run gets its own topics and groups on the shared broker.
const runPrefix = `test-${randomUUID().slice(0, 8)}.`;
const options = (extra: Partial<KafkaMessageBusOptions> = {}): KafkaMessageBusOptions => ({
  brokers: brokers(),
  clientId: 'message-bus-engine-spec',
  topicPrefix: runPrefix,
  partitions: 6,
  retentionMs: 3_600_000,
  sessionTimeoutMs: 6_000,
  retryDelayMs: 10,
  ...extra,
});

afterAll(async () => {
  if (process.env.KAFKA_BROKERS?.trim()) await deleteKafkaPrefix(brokers(), runPrefix);
});

describeMessageBusContract('KafkaMessageBus', async () => {
  const bus = await KafkaMessageBus.connect(options());
  return { bus, cleanup: () => bus.close() };
});

describe('KafkaMessageBus on a real broker', () => {
  const opened: KafkaMessageBus[] = [];
  const connect = async (extra: Partial<KafkaMessageBusOptions> = {}): Promise<KafkaMessageBus> => {
    const bus = await KafkaMessageBus.connect(options(extra));
    opened.push(bus);
    return bus;
  };
  const admin = () => new Kafka({ clientId: 'engine-spec-observer', brokers: brokers(), logLevel: logLevel.NOTHING }).admin();
  const unique = (name: string): string => `${name}-${randomUUID().slice(0, 8)}`;
  const keys = Array.from({ length: 12 }, (_, i) => `quote-${i}`);
  /** A value of `bytes` characters that starts with its number, so order and size can be checked without the bulk. */
  const large = (n: number, bytes: number): string => `${n} `.padEnd(bytes, 'x');
  const sizeOf = (message: BusMessage): string => `${message.key} ${message.value.split(' ', 1)[0]} ${message.value.length}`;
  const consumeAll = async (bus: KafkaMessageBus, topic: string, count: number): Promise<ConsumedMessage[]> => {
    const received: ConsumedMessage[] = [];
    await bus.consume({ groupId: unique('outbox'), topics: [topic], handleBatch: async (batch) => void received.push(...batch) });
    await waitFor(() => received.length >= count, 30_000);
    return received;
  };

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((bus) => bus.close()));
  });

  it('creates its topics with the configured partitions and retention and an 8 MiB message limit, under the prefix', async () => {
    const topic = unique('domain-events');
    await connect({ topics: [topic], partitions: 3, retentionMs: 86_400_000 });

    const observer = admin();
    await observer.connect();
    try {
      const { topics } = await observer.fetchTopicMetadata({ topics: [runPrefix + topic] });
      const { resources } = await observer.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2 /* TOPIC */, name: runPrefix + topic, configNames: ['retention.ms', 'max.message.bytes'] }],
      });
      const config = (name: string) => resources[0].configEntries.find((entry) => entry.configName === name)?.configValue;
      expect(topics[0].partitions).toHaveLength(3);
      expect(config('retention.ms')).toBe('86400000');
      expect(config('max.message.bytes')).toBe(String(8 * 1024 * 1024));
    } finally {
      await observer.disconnect();
    }
  });

  it('uses an existing topic as it is, and says so when its partition count differs from the configuration', async () => {
    const topic = unique('domain-events');
    const older = await connect({ topics: [topic], partitions: 2 });
    await older.publish(topic, [{ key: 'quote-1', value: 'before' }]);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const newer = await connect({ topics: [topic], partitions: 6 });
      await newer.publish(topic, [{ key: 'quote-1', value: 'after' }]);
      const received: ConsumedMessage[] = [];
      await newer.consume({ groupId: unique('outbox'), topics: [topic], handleBatch: async (batch) => void received.push(...batch) });
      await waitFor(() => received.length === 2, 20_000);

      expect(received.map((m) => m.value)).toEqual(['before', 'after']);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('exists with 2 partitions, not the configured 6'));
    } finally {
      warn.mockRestore();
    }
  });

  it('on an existing topic with the broker default limit of 1 MB, still publishes a call larger than that, and warns naming max.message.bytes', async () => {
    const topic = unique('domain-events');
    const observer = admin();
    await observer.connect();
    try {
      await observer.createTopics({ waitForLeaders: true, topics: [{ topic: runPrefix + topic, numPartitions: 6 }] });
    } finally {
      await observer.disconnect();
    }
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const bus = await connect({ topics: [topic] });
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('exists with max.message.bytes=1048588'));

      await bus.publish(topic, [1, 2, 3].map((n) => ({ key: 'quote-1', value: large(n, 450 * 1024) })));
      const received = await consumeAll(bus, topic, 3);
      expect(received.map(sizeOf)).toEqual([1, 2, 3].map((n) => `quote-1 ${n} ${450 * 1024}`));
    } finally {
      warn.mockRestore();
    }
  });

  it('publishes and delivers a 3 MiB message', async () => {
    const topic = unique('domain-events');
    const bus = await connect();

    await bus.publish(topic, [{ key: 'quote-1', value: large(1, 3 * 1024 * 1024) }]);

    const received = await consumeAll(bus, topic, 1);
    expect(received.map(sizeOf)).toEqual([`quote-1 1 ${3 * 1024 * 1024}`]);
    expect(received[0].value).toBe(large(1, 3 * 1024 * 1024));
  });

  it('publishes three 450 KiB messages of one key in one call, and delivers them in order', async () => {
    const topic = unique('domain-events');
    const bus = await connect();

    await bus.publish(topic, [1, 2, 3].map((n) => ({ key: 'quote-1', value: large(n, 450 * 1024) })));

    const received = await consumeAll(bus, topic, 3);
    expect(received.map(sizeOf)).toEqual([1, 2, 3].map((n) => `quote-1 ${n} ${450 * 1024}`));
  });

  it('publishes a page of 500 small events with a few large ones in one call, and delivers each key in order', async () => {
    const topic = unique('domain-events');
    const bus = await connect();
    // A relay page: 500 small events of 12 streams, and four events of ~1 MiB quotes (the largest body the API takes) among them.
    const page = Array.from({ length: 504 }, (_, i) => {
      const key = keys[i % keys.length];
      const n = Math.floor(i / keys.length) + 1;
      return { key, value: large(n, i % 126 === 7 ? 1_050_000 : 800) };
    });

    await bus.publish(topic, page);

    const received = await consumeAll(bus, topic, page.length);
    for (const key of keys) {
      expect(received.filter((m) => m.key === key).map(sizeOf)).toEqual(page.filter((m) => m.key === key).map(sizeOf));
    }
  });

  it('resolves a publish only once the broker holds the messages: another client sees them at once', async () => {
    const topic = unique('quotes');
    const bus = await connect();
    const observer = admin();
    await observer.connect();
    try {
      await bus.publish(topic, keys.map((key) => ({ key, value: 'sent' })));
      const offsets = await observer.fetchTopicOffsets(runPrefix + topic);
      expect(offsets.reduce((sum, partition) => sum + Number(partition.high), 0)).toBe(keys.length);
    } finally {
      await observer.disconnect();
    }
  });

  it('keeps each key in order and on one partition, with keys spread over the partitions, under concurrent publishes', async () => {
    const topic = unique('quotes');
    const bus = await connect();
    const received: ConsumedMessage[] = [];
    await bus.consume({ groupId: unique('outbox'), topics: [topic], handleBatch: async (batch) => void received.push(...batch) });

    // Each key's publishes are sequential; the keys race each other.
    await Promise.all(
      keys.map(async (key) => {
        for (let i = 1; i <= 20; i++) await bus.publish(topic, [{ key, value: `${key}:${i}` }]);
      }),
    );
    await waitFor(() => received.length === keys.length * 20, 20_000);

    for (const key of keys) {
      const ofKey = received.filter((m) => m.key === key);
      expect(ofKey.map((m) => m.value)).toEqual(Array.from({ length: 20 }, (_, i) => `${key}:${i + 1}`));
      expect(new Set(ofKey.map((m) => m.partition)).size).toBe(1);
    }
    expect(new Set(received.map((m) => m.partition)).size).toBeGreaterThan(1);
  });

  it('two consumers of one group split the partitions, and each message is handled by one of them', async () => {
    const topic = unique('domain-events');
    const groupId = unique('outbox');
    const bus = await connect();
    const handledBy = new Map<string, string[]>();
    const start = (name: string) =>
      bus.consume({
        groupId,
        topics: [topic],
        handleBatch: async (batch) => {
          for (const message of batch) handledBy.set(message.value, [...(handledBy.get(message.value) ?? []), name]);
        },
      });
    await start('one');
    await start('two');

    // Rounds until both members hold partitions; then one more round, wholly after the rebalance.
    let round = 0;
    const consumersSeen = () => new Set([...handledBy.values()].flat()).size;
    while (consumersSeen() < 2) {
      round += 1;
      await bus.publish(topic, keys.map((key) => ({ key, value: `${key}:${round}` })));
      await waitFor(() => handledBy.has(`${keys[keys.length - 1]}:${round}`), 20_000);
      if (round > 200) throw new Error('the second consumer never got a partition');
    }
    const last = round + 1;
    await bus.publish(topic, keys.map((key) => ({ key, value: `${key}:${last}` })));
    await waitFor(() => keys.every((key) => handledBy.has(`${key}:${last}`)), 20_000);

    const lastRound = keys.map((key) => handledBy.get(`${key}:${last}`)!);
    expect(lastRound.every((names) => names.length === 1)).toBe(true);
    expect(new Set(lastRound.flat())).toEqual(new Set(['one', 'two']));
  });

  it('loses nothing and keeps each key in order while consumers join and leave the group mid-stream', async () => {
    const topic = unique('domain-events');
    const groupId = unique('outbox');
    const bus = await connect();
    // Every delivery in the order the handlers ran; a rebalance may deliver a message again.
    const deliveries: { key: string; n: number }[] = [];
    const start = () =>
      bus.consume({
        groupId,
        topics: [topic],
        handleBatch: async (batch) => {
          await new Promise((resolve) => setTimeout(resolve, 2));
          for (const message of batch) deliveries.push({ key: message.key, n: Number(message.value.split(':')[1]) });
        },
      });
    let publishing = true;
    let published = 0;
    const publisher = (async () => {
      while (publishing) {
        published += 1;
        await bus.publish(topic, keys.map((key) => ({ key, value: `${key}:${published}` })));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();

    const first: Consumer = await start();
    await waitFor(() => deliveries.length > 50, 20_000);
    await start();
    await waitFor(() => published > 60, 20_000);
    await first.stop();
    await waitFor(() => published > 120, 20_000);
    publishing = false;
    await publisher;
    await waitFor(() => keys.every((key) => deliveries.some((d) => d.key === key && d.n === published)), 30_000);

    for (const key of keys) {
      // At-least-once in order: when a message is handled, every earlier one of its key already was.
      let highest = 0;
      for (const { n } of deliveries.filter((d) => d.key === key)) {
        expect(n).toBeLessThanOrEqual(highest + 1);
        highest = Math.max(highest, n);
      }
      expect(highest).toBe(published);
    }
  });

  it('stop() ends the backoffs of every partition at once, not only the last one to fail', async () => {
    const topic = unique('webhooks');
    const bus = await connect({ retryDelayMs: 8_000, maxRetryDelayMs: 8_000 });
    await bus.publish(topic, keys.map((key) => ({ key, value: 'deliver' })));
    const partitionsOfTopic = new Set<number>();
    const failing = new Set<number>();
    const consumer = await bus.consume({
      groupId: unique('outbox'),
      topics: [topic],
      handleBatch: async (batch) => {
        failing.add(batch[0].partition);
        throw new Error('endpoint down');
      },
      onError: () => undefined,
    });
    const observer = admin();
    await observer.connect();
    try {
      for (const { partition, high } of await observer.fetchTopicOffsets(runPrefix + topic)) if (high !== '0') partitionsOfTopic.add(partition);
    } finally {
      await observer.disconnect();
    }
    await waitFor(() => failing.size === partitionsOfTopic.size, 20_000);
    expect(failing.size).toBeGreaterThan(1);

    const startedAt = performance.now();
    await consumer.stop();
    expect(performance.now() - startedAt).toBeLessThan(2_000);
  });

  it('after a consumer process dies mid-batch, the group hands its uncommitted batch to another consumer', async () => {
    const topic = unique('webhooks');
    const groupId = unique('outbox');
    const child = runTypeScript(`
      const { KafkaMessageBus } = require(${JSON.stringify(require.resolve('./kafka-message-bus'))});
      KafkaMessageBus.connect(${JSON.stringify(options({ sessionTimeoutMs: 2_000 }))}).then(async (bus) => {
        await bus.publish(${JSON.stringify(topic)}, [{ key: 'w1', value: 'deliver' }]);
        await bus.consume({
          groupId: ${JSON.stringify(groupId)},
          topics: [${JSON.stringify(topic)}],
          handleBatch: () => { console.log('handling'); return new Promise(() => undefined); },
        });
      });
    `);
    await firstLine(child);
    child.kill('SIGKILL');
    await exited(child);

    const bus = await connect();
    const received: string[] = [];
    await bus.consume({ groupId, topics: [topic], handleBatch: async (batch) => void received.push(...batch.map((m) => m.value)) });
    await waitFor(() => received.length === 1, 30_000);

    expect(received).toEqual(['deliver']);
  });

  it('hands a message to the handler within milliseconds of its publish (publish → handler latency)', async () => {
    const topic = unique('pricing');
    const bus = await connect();
    const arrivals = new Map<string, number>();
    let onArrival: (() => void) | null = null;
    await bus.consume({
      groupId: unique('outbox'),
      topics: [topic],
      handleBatch: async (batch) => {
        for (const message of batch) arrivals.set(message.value, performance.now());
        onArrival?.();
      },
    });
    // Warm-up: the group's first assignment and the connections to the partition leaders.
    await bus.publish(topic, keys.map((key) => ({ key, value: `warm-${key}` })));
    await waitFor(() => arrivals.size === keys.length, 20_000);

    const latencies: number[] = [];
    for (let i = 0; i < 200; i++) {
      const value = `m${i}`;
      const arrived = new Promise<void>((resolve) => (onArrival = () => arrivals.has(value) && resolve()));
      const sentAt = performance.now();
      await bus.publish(topic, [{ key: keys[i % keys.length], value }]);
      await Promise.race([arrived, waitFor(() => arrivals.has(value), 5_000)]);
      latencies.push(arrivals.get(value)! - sentAt);
    }
    latencies.sort((a, b) => a - b);
    const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    process.stdout.write(
      `KafkaMessageBus publish → handler over ${latencies.length} messages: ` +
        `p50 ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms, max ${at(1).toFixed(1)} ms\n`,
    );
    expect(at(0.5)).toBeLessThan(50);
  });
});
