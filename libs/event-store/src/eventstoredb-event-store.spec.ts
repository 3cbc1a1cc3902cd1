import { UnavailableError } from '@eventstore/db-client';
import { describeEventStoreContract } from '@lib/event-store/testing/event-store.contract';
import { FakeEventStoreDb } from '@lib/event-store/testing/fake-eventstoredb-client';
import { withLeaderPreference } from './eventstoredb-client';
import { EventStoreDbEventStore, fromPortPosition, serverFilter, toPortPosition } from './eventstoredb-event-store';
import { EventData, RecordedEvent, Subscription, WrongExpectedRevisionError } from './event-store.port';

// The whole port contract, at the client boundary: the adapter over a client that answers as the real one does.
describeEventStoreContract('EventStoreDbEventStore over a fake EventStoreDB client', async () => {
  const store = new EventStoreDbEventStore(new FakeEventStoreDb(), { pageSize: 3, batchSize: 2, retryDelayMs: 10 });
  return { store, cleanup: () => store.close() };
});

const happened = (n: number, type = 'quote.v1.revised'): EventData => ({ type, data: { n }, metadata: { actor: 'system' } });
const numbers = (events: RecordedEvent[]): number[] => events.map((event) => (event.data as { n: number }).n);

describe('EventStoreDbEventStore at the client boundary', () => {
  let server: FakeEventStoreDb;
  let store: EventStoreDbEventStore;
  const subscriptions: Subscription[] = [];

  beforeEach(() => {
    server = new FakeEventStoreDb();
    store = new EventStoreDbEventStore(server, { retryDelayMs: 20, maxRetryDelayMs: 1_000 });
  });
  afterEach(async () => {
    await Promise.all(subscriptions.splice(0).map((subscription) => subscription.stop()));
    await store.close();
  });
  const subscribe = (...args: Parameters<EventStoreDbEventStore['subscribeToAll']>): Subscription => {
    const subscription = store.subscribeToAll(...args);
    subscriptions.push(subscription);
    return subscription;
  };

  describe('appending', () => {
    it('sends each expected revision as the client spells it', async () => {
      await store.appendToStream('quote-1', [happened(1)], 'no_stream');
      await store.appendToStream('quote-1', [happened(2)], 0);
      await store.appendToStream('quote-1', [happened(3)], 'stream_exists');
      await store.appendToStream('quote-1', [happened(4)], 'any');

      expect(server.appends.map((append) => append.expectedRevision)).toEqual(['no_stream', 0n, 'stream_exists', 'any']);
      await expect(store.appendToStream('quote-1', [happened(5)], -1)).rejects.toThrow(RangeError);
      await expect(store.appendToStream('quote-1', [happened(5)], 1.5)).rejects.toThrow(RangeError);
      expect(server.appends).toHaveLength(4);
    });

    it('stores events as JSON with a UUID, the type, the data and the metadata', async () => {
      await store.appendToStream('quote-1', [happened(1), { type: 'quote.v1.sent', data: { n: 2 } }], 'no_stream');

      const [{ events }] = server.appends;
      expect(events[0]).toMatchObject({ contentType: 'application/json', type: 'quote.v1.revised', data: { n: 1 }, metadata: { actor: 'system' } });
      expect(events[0].id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(events[1].metadata).toEqual({});
    });

    it('turns the client conflict into the port conflict with the actual revision', async () => {
      await store.appendToStream('quote-1', [happened(1), happened(2)], 'no_stream');

      const refused = await store.appendToStream('quote-1', [happened(3)], 0).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(WrongExpectedRevisionError);
      expect(refused).toMatchObject({ streamId: 'quote-1', expected: 0, actual: 1 });

      const missing = await store.appendToStream('quote-2', [happened(1)], 'stream_exists').catch((error: unknown) => error);
      expect(missing).toMatchObject({ name: 'WrongExpectedRevisionError', expected: 'stream_exists', actual: 'no_stream' });
    });

    it('treats an append failure reported without throwing (throwOnAppendFailure=false) as the same conflict', async () => {
      server = new FakeEventStoreDb({ throwOnAppendFailure: false });
      store = new EventStoreDbEventStore(server);
      await store.appendToStream('quote-1', [happened(1)], 'no_stream');

      await expect(store.appendToStream('quote-1', [happened(2)], 'no_stream')).rejects.toMatchObject({ name: 'WrongExpectedRevisionError', actual: 0 });
      await expect(store.appendToStream('quote-2', [happened(2)], 3)).rejects.toMatchObject({ name: 'WrongExpectedRevisionError', actual: 'no_stream' });
    });

    it('lets every other client error through unchanged', async () => {
      const down = new UnavailableError(undefined, 'no leader');
      jest.spyOn(server, 'appendToStream').mockRejectedValueOnce(down);
      await expect(store.appendToStream('quote-1', [happened(1)], 'no_stream')).rejects.toBe(down);
    });

    it('with no events only checks the expected revision', async () => {
      const { position } = await store.appendToStream('quote-1', [happened(1)], 'no_stream');

      expect(await store.appendToStream('quote-1', [], 0)).toEqual({ nextRevision: 0, position });
      expect(await store.appendToStream('quote-9', [], 'no_stream')).toEqual({ nextRevision: -1, position: 0 });
      await expect(store.appendToStream('quote-1', [], 'no_stream')).rejects.toMatchObject({ actual: 0 });
      expect(server.appends).toHaveLength(1);
    });
  });

  describe('reading', () => {
    it('reads a stream the server does not know as empty, and passes on other failures', async () => {
      expect(await store.readStream('quote-unknown')).toEqual([]);

      const down = new UnavailableError(undefined, 'connection refused');
      jest.spyOn(server, 'readStream').mockReturnValueOnce({
        [Symbol.asyncIterator]: async function* () {
          yield* [];
          throw down;
        },
      });
      await expect(store.readStream('quote-1')).rejects.toBe(down);
    });

    it('maps revisions, positions beyond 32 bits, metadata and the recording time', async () => {
      const before = Date.now();
      const result = await store.appendToStream('quote-1', [happened(1), { type: 'quote.v1.sent', data: { n: 2 } }], 'no_stream');

      const events = await store.readStream('quote-1');
      expect(events.map((event) => event.revision)).toEqual([0, 1]);
      expect(events[0].position).toBeGreaterThan(2 ** 32);
      expect(events[1].position).toBeGreaterThan(events[0].position);
      expect(result).toEqual({ nextRevision: 1, position: events[1].position });
      expect(events[0].metadata).toEqual({ actor: 'system' });
      expect(events[1].metadata).toEqual({});
      expect(events[0].recordedAt).toBeGreaterThanOrEqual(before);
    });

    it('leaves the server’s own events out of $all and of the head position', async () => {
      server.writeSystemEvent();
      const { position } = await store.appendToStream('quote-1', [happened(1)], 'no_stream');
      server.writeSystemEvent('$stats-127.0.0.1:2113', '$statsCollected');

      expect(numbers(await store.readAll({ after: 0, maxCount: 10 }))).toEqual([1]);
      expect(await store.headPosition()).toBe(position);
    });

    it('reads the head of an empty log, or of one holding only server events, as 0', async () => {
      expect(await store.headPosition()).toBe(0);
      server.writeSystemEvent();
      expect(await store.headPosition()).toBe(0);
    });

    it('pages through $all, keeping what both filters match, after the given position', async () => {
      store = new EventStoreDbEventStore(server, { pageSize: 2 });
      await store.appendToStream('quote-1', [happened(1)], 'no_stream');
      server.writeSystemEvent();
      await store.appendToStream('lead-1', [happened(2, 'lead.v1.noted')], 'no_stream');
      const { position } = await store.appendToStream('quote-2', [happened(3, 'quote.v1.created')], 'no_stream');
      await store.appendToStream('quote-2', [happened(4, 'lead.v1.linked')], 0);
      await store.appendToStream('quote-3', [happened(5)], 'no_stream');

      expect(numbers(await store.readAll({ after: 0, maxCount: 10, filter: { streamPrefixes: ['quote-'], eventTypePrefixes: ['quote.'] } }))).toEqual([1, 3, 5]);
      expect(numbers(await store.readAll({ after: position, maxCount: 10, filter: { streamPrefixes: ['quote-'] } }))).toEqual([4, 5]);
      expect(numbers(await store.readAll({ after: 0, maxCount: 2, filter: { eventTypePrefixes: ['lead.'] } }))).toEqual([2, 4]);
    });
  });

  describe('positions', () => {
    it('round-trips a port position to the log record it came from', () => {
      const record = { commit: 2n ** 50n + 3n, prepare: 2n ** 50n + 3n };
      expect(fromPortPosition(toPortPosition(record))).toEqual(record);
      expect(fromPortPosition(0)).toBe('start');
    });

    it('refuses positions a number cannot hold exactly, and events of explicit transactions', () => {
      expect(() => toPortPosition({ commit: 2n ** 53n, prepare: 2n ** 53n })).toThrow(RangeError);
      expect(() => toPortPosition({ commit: 500n, prepare: 420n })).toThrow(/explicit transaction/);
      expect(() => fromPortPosition(-1)).toThrow(RangeError);
      expect(() => fromPortPosition(2 ** 53)).toThrow(RangeError);
    });
  });

  describe('subscribing', () => {
    const recorder = () => {
      const handled: RecordedEvent[] = [];
      const errors: unknown[] = [];
      return { handled, errors, handler: async (event: RecordedEvent) => void handled.push(event), onError: (error: unknown) => void errors.push(error) };
    };

    it('asks the server to filter: stream prefixes, else type prefixes, else everything but its own events', () => {
      expect(serverFilter({ streamPrefixes: ['quote-', 'lead-'], eventTypePrefixes: ['quote.'] })).toMatchObject({ filterOn: 'streamName', prefixes: ['quote-', 'lead-'] });
      expect(serverFilter({ eventTypePrefixes: ['quote.'] })).toMatchObject({ filterOn: 'eventType', prefixes: ['quote.'] });
      expect(serverFilter({ streamPrefixes: [] })).toMatchObject({ filterOn: 'eventType', regex: '^[^$].*' });
      expect(serverFilter(undefined)).toMatchObject({ filterOn: 'eventType', regex: '^[^$].*' });
    });

    it('checks on arrival the filter the server could not apply', async () => {
      const { handled, handler } = recorder();
      subscribe({ after: 0, filter: { streamPrefixes: ['quote-'], eventTypePrefixes: ['quote.v1.sent'] }, handler });
      await store.appendToStream('quote-1', [happened(1), happened(2, 'quote.v1.sent')], 'no_stream');
      await store.appendToStream('lead-1', [happened(3, 'quote.v1.sent')], 'no_stream');
      await store.appendToStream('quote-1', [happened(4, 'quote.v1.sent')], 1);
      await waitFor(() => handled.length === 2);

      expect(numbers(handled)).toEqual([2, 4]);
      expect(server.subscribeCalls[0].filter).toMatchObject({ filterOn: 'streamName', prefixes: ['quote-'] });
    });

    it('after a drop, resubscribes from the last handled position with growing waits, delivering each event once', async () => {
      const { handled, errors, handler, onError } = recorder();
      await store.appendToStream('quote-1', [happened(1), happened(2), happened(3)], 'no_stream');
      subscribe({ after: 0, handler, onError });
      await waitFor(() => handled.length === 3);

      server.failNextSubscriptions = { count: 3, error: new UnavailableError(undefined, 'connection refused') };
      server.dropSubscriptions(new UnavailableError(undefined, 'connection lost'));
      await store.appendToStream('quote-1', [happened(4), happened(5)], 2);
      await waitFor(() => handled.length === 5);

      expect(numbers(handled)).toEqual([1, 2, 3, 4, 5]);
      expect(errors.map((error) => (error as Error).message)).toEqual(['connection lost', 'connection refused', 'connection refused', 'connection refused']);
      const resumedFrom = { commit: BigInt(handled[2].position), prepare: BigInt(handled[2].position) };
      expect(server.subscribeCalls.map((call) => call.fromPosition)).toEqual(['start', resumedFrom, resumedFrom, resumedFrom, resumedFrom]);
      const waits = server.subscribeCalls.slice(1).map((call, i) => call.at - server.subscribeCalls[i].at);
      // 20, 40, 80, 160 ms before each new attempt (timers never fire early; allow 1 ms of clock rounding)
      expect(waits[1]).toBeGreaterThanOrEqual(39);
      expect(waits[2]).toBeGreaterThanOrEqual(79);
      expect(waits[3]).toBeGreaterThanOrEqual(159);
      expect(server.openSubscriptions).toBe(1);
    });

    it('a drop while a handler works loses nothing and repeats nothing', async () => {
      const handled: number[] = [];
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      subscribe({
        after: 0,
        handler: async (event) => {
          if ((event.data as { n: number }).n === 2) await gate;
          handled.push((event.data as { n: number }).n);
        },
        onError: () => undefined,
      });
      await store.appendToStream('quote-1', [1, 2, 3, 4, 5, 6].map((n) => happened(n)), 'no_stream');
      await waitFor(() => handled.length === 1);
      server.dropSubscriptions(new UnavailableError(undefined, 'leader changed'));
      await store.appendToStream('quote-1', [happened(7)], 5);
      release();
      await waitFor(() => handled.length === 7);
      await sleep(30);

      expect(handled).toEqual([1, 2, 3, 4, 5, 6, 7]);
    });

    it('never hands over again an event at or before the position it resumes from', async () => {
      server = new FakeEventStoreDb({ inclusiveSubscriptions: true });
      store = new EventStoreDbEventStore(server, { retryDelayMs: 5 });
      const { position } = await store.appendToStream('quote-1', [happened(1), happened(2)], 'no_stream');
      await store.appendToStream('quote-1', [happened(3)], 1);
      const { handled, handler } = recorder();

      subscribe({ after: position, handler });
      await waitFor(() => handled.length === 1);
      await sleep(20);
      expect(numbers(handled)).toEqual([3]);
    });

    it('hands a failing event over again, the same one, until it succeeds', async () => {
      const attempts: number[] = [];
      const errors: unknown[] = [];
      let failures = 2;
      const subscription = subscribe({
        after: 0,
        handler: async (event) => {
          attempts.push((event.data as { n: number }).n);
          if ((event.data as { n: number }).n === 1 && failures-- > 0) throw new Error('projection bug');
        },
        onError: (error) => void errors.push(error),
      });
      const { position } = await store.appendToStream('quote-1', [happened(1), happened(2)], 'no_stream');
      await waitFor(() => attempts.length === 4);

      expect(attempts).toEqual([1, 1, 1, 2]);
      expect(errors).toHaveLength(2);
      expect(subscription.position).toBe(position);
      expect(server.subscribeCalls).toHaveLength(1);
    });

    it('hands a batch handler what has arrived, up to the batch size, never an empty batch', async () => {
      store = new EventStoreDbEventStore(server, { batchSize: 3 });
      await store.appendToStream('quote-1', [1, 2, 3, 4, 5, 6, 7].map((n) => happened(n)), 'no_stream');
      const batches: number[][] = [];

      subscribe({ after: 0, handleBatch: async (events) => void batches.push(numbers(events)) });
      await waitFor(() => batches.flat().length === 7);

      expect(batches.flat()).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(batches.every((batch) => batch.length > 0 && batch.length <= 3)).toBe(true);
      expect(batches.some((batch) => batch.length > 1)).toBe(true);
    });

    it('stop() during a backoff returns at once, unsubscribes and delivers nothing more', async () => {
      store = new EventStoreDbEventStore(server, { retryDelayMs: 10_000, maxRetryDelayMs: 10_000 });
      const { handled, handler, errors, onError } = recorder();
      const subscription = subscribe({ after: 0, handler, onError });
      await store.appendToStream('quote-1', [happened(1)], 'no_stream');
      await waitFor(() => handled.length === 1);
      server.dropSubscriptions(new UnavailableError(undefined, 'connection lost'));
      await waitFor(() => errors.length === 1);

      const started = Date.now();
      await subscription.stop();
      expect(Date.now() - started).toBeLessThan(1_000);
      await store.appendToStream('quote-1', [happened(2)], 0);
      await sleep(20);
      expect(numbers(handled)).toEqual([1]);
      expect(server.openSubscriptions).toBe(0);
      expect(server.subscribeCalls).toHaveLength(1);
    });

    it('close() stops the subscriptions and disposes of the client', async () => {
      const { handler } = recorder();
      subscribe({ after: 0, handler });
      await waitFor(() => server.openSubscriptions === 1);
      await store.close();
      expect(server.openSubscriptions).toBe(0);
      expect(server.disposed).toBe(true);
    });
  });

  describe('connecting', () => {
    it('prefers the cluster leader unless the connection string chooses a node', () => {
      expect(withLeaderPreference('esdb://localhost:2113?tls=false')).toBe('esdb://localhost:2113?tls=false&nodePreference=leader');
      expect(withLeaderPreference('esdb+discover://cluster.internal:2113')).toBe('esdb+discover://cluster.internal:2113?nodePreference=leader');
      expect(withLeaderPreference('esdb://a:2113,b:2113?node_preference=Follower&tls=false')).toBe('esdb://a:2113,b:2113?node_preference=Follower&tls=false');
      expect(withLeaderPreference('esdb://a:2113/?NodePreference=random')).toBe('esdb://a:2113/?NodePreference=random');
    });

    it('builds a client from the connection string without contacting the server', async () => {
      const store = EventStoreDbEventStore.connect({ url: 'esdb://127.0.0.1:1?tls=false' });
      await store.close();
      expect(() => EventStoreDbEventStore.connect({ url: 'http://localhost:2113' })).toThrow();
    });
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}
