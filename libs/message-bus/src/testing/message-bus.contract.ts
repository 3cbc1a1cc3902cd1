import { randomUUID } from 'node:crypto';
import { BusMessage, ConsumedMessage, ConsumeOptions, Consumer, MessageBus } from '../message-bus.port';

/**
 * The behaviour every MessageBus adapter must share. Each test uses its own topics and groups (a
 * random suffix), so the suite can run against a shared broker. A group that has never committed
 * starts from the beginning of its topics.
 */
export function describeMessageBusContract(
  name: string,
  factory: () => Promise<{ bus: MessageBus; cleanup: () => Promise<void> }>,
): void {
  describe(`MessageBus contract: ${name}`, () => {
    let bus: MessageBus;
    let cleanup: () => Promise<void>;
    const running: Consumer[] = [];

    beforeAll(async () => {
      ({ bus, cleanup } = await factory());
    });
    afterEach(async () => {
      await Promise.all(running.splice(0).map((consumer) => consumer.stop()));
    });
    afterAll(async () => {
      await cleanup();
    });

    const unique = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;
    const messages = (key: string, from: number, to: number): BusMessage[] =>
      Array.from({ length: to - from + 1 }, (_, i) => ({ key, value: `${key}:${from + i}` }));
    const consume = async (options: ConsumeOptions): Promise<Consumer> => {
      const consumer = await bus.consume(options);
      running.push(consumer);
      return consumer;
    };
    /** Consumes into an array; stop the consumer to stop collecting. */
    const collect = async (groupId: string, topics: string[]) => {
      const received: ConsumedMessage[] = [];
      const consumer = await consume({ groupId, topics, handleBatch: async (batch) => void received.push(...batch) });
      return { received, consumer };
    };
    const values = (received: ConsumedMessage[]): string[] => received.map((m) => m.value);

    it('delivers a published message with its topic, partition, offset, key, value and headers', async () => {
      const topic = unique('quotes');
      await bus.publish(topic, [{ key: 'quote-1', value: '{"type":"quote.v1.sent"}', headers: { 'content-type': 'application/json' } }]);

      const { received } = await collect(unique('group'), [topic]);
      await waitFor(() => received.length === 1);

      const [message] = received;
      expect(message).toMatchObject({ topic, key: 'quote-1', value: '{"type":"quote.v1.sent"}' });
      expect(message.headers).toEqual({ 'content-type': 'application/json' });
      expect(Number.isInteger(message.partition) && message.partition >= 0).toBe(true);
      expect(message.offset).toMatch(/^\d+$/);
    });

    it('keeps the publish order of each key, across publishes made before and while consuming', async () => {
      const topic = unique('quotes');
      await bus.publish(topic, [...messages('a', 1, 5), ...messages('b', 1, 5)]);
      await bus.publish(topic, messages('c', 1, 5));
      const { received } = await collect(unique('group'), [topic]);
      for (let i = 6; i <= 10; i++) await bus.publish(topic, [...messages('b', i, i), ...messages('a', i, i), ...messages('c', i, i)]);

      await waitFor(() => received.length === 30);
      for (const key of ['a', 'b', 'c']) {
        const ofKey = received.filter((m) => m.key === key);
        expect(values(ofKey)).toEqual(messages(key, 1, 10).map((m) => m.value));
        expect(new Set(ofKey.map((m) => m.partition)).size).toBe(1);
        const offsets = ofKey.map((m) => BigInt(m.offset));
        expect(offsets.every((offset, i) => i === 0 || offset > offsets[i - 1])).toBe(true);
      }
    });

    it('consumes several topics in one group', async () => {
      const quotes = unique('quotes');
      const leads = unique('leads');
      await bus.publish(quotes, messages('q', 1, 3));
      await bus.publish(leads, messages('l', 1, 2));

      const { received } = await collect(unique('group'), [quotes, leads]);
      await waitFor(() => received.length === 5);

      expect(values(received.filter((m) => m.topic === quotes))).toEqual(['q:1', 'q:2', 'q:3']);
      expect(values(received.filter((m) => m.topic === leads))).toEqual(['l:1', 'l:2']);
    });

    it('hands a failed batch over again after reporting the error, and commits it only once handled', async () => {
      const topic = unique('webhooks');
      const groupId = unique('group');
      await bus.publish(topic, messages('k', 1, 5));
      const errors: unknown[] = [];
      const handled: string[] = [];
      let failuresLeft = 2;

      const consumer = await consume({
        groupId,
        topics: [topic],
        handleBatch: async (batch) => {
          if (failuresLeft > 0) {
            failuresLeft -= 1;
            throw new Error('endpoint down');
          }
          handled.push(...values(batch));
        },
        onError: (error) => errors.push(error),
      });
      await waitFor(() => handled.length === 5);
      await consumer.stop();

      expect(handled).toEqual(messages('k', 1, 5).map((m) => m.value));
      expect(errors.map((e) => (e as Error).message)).toEqual(['endpoint down', 'endpoint down']);

      // Restarted, the group finds nothing left of those five: the next message is the first it sees.
      await bus.publish(topic, messages('k', 6, 6));
      const { received } = await collect(groupId, [topic]);
      await waitFor(() => received.length >= 1);
      expect(values(received)).toEqual(['k:6']);
    });

    it('a stopped group resumes from its committed offset', async () => {
      const topic = unique('quotes');
      const groupId = unique('group');
      await bus.publish(topic, messages('k', 1, 4));
      const first = await collect(groupId, [topic]);
      await waitFor(() => first.received.length === 4);
      await first.consumer.stop();

      await bus.publish(topic, messages('k', 5, 7));
      const second = await collect(groupId, [topic]);
      await waitFor(() => second.received.length >= 3);

      expect(values(first.received)).toEqual(['k:1', 'k:2', 'k:3', 'k:4']);
      expect(values(second.received)).toEqual(['k:5', 'k:6', 'k:7']);
    });

    it('stop() waits for the batch in hand, and that batch stays committed', async () => {
      const topic = unique('quotes');
      const groupId = unique('group');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let inHandler = false;
      const handled: string[] = [];
      const consumer = await consume({
        groupId,
        topics: [topic],
        handleBatch: async (batch) => {
          inHandler = true;
          await gate;
          handled.push(...values(batch));
        },
      });
      await bus.publish(topic, messages('k', 1, 1));
      try {
        await waitFor(() => inHandler);
        let stopped = false;
        const stopping = consumer.stop().then(() => (stopped = true));
        await sleep(30);
        expect(stopped).toBe(false);
        release();
        await stopping;
      } finally {
        release();
      }
      expect(handled).toEqual(['k:1']);

      await bus.publish(topic, messages('k', 2, 2));
      const { received } = await collect(groupId, [topic]);
      await waitFor(() => received.length >= 1);
      expect(values(received)).toEqual(['k:2']);
    });

    it('each group gets every message', async () => {
      const topic = unique('quotes');
      await bus.publish(topic, [...messages('a', 1, 3), ...messages('b', 1, 3)]);
      const outbox = await collect(unique('outbox'), [topic]);
      const audit = await collect(unique('audit'), [topic]);
      await bus.publish(topic, messages('a', 4, 4));

      await waitFor(() => outbox.received.length === 7 && audit.received.length === 7);
      const expected = [...messages('a', 1, 3), ...messages('b', 1, 3), ...messages('a', 4, 4)].map((m) => m.value).sort();
      expect(values(outbox.received).sort()).toEqual(expected);
      expect(values(audit.received).sort()).toEqual(expected);
    });

    it('answers a probe while open, and refuses one once closed (readiness)', async () => {
      await expect(bus.probe()).resolves.toBeUndefined();
      const other = await factory();
      await expect(other.bus.probe()).resolves.toBeUndefined();
      await other.cleanup();
      await expect(other.bus.probe()).rejects.toThrow();
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}
