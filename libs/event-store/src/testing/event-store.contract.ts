import { randomUUID } from 'node:crypto';
import { EventData, EventStore, RecordedEvent, Subscription, WrongExpectedRevisionError } from '../event-store.port';

/**
 * The behaviour every EventStore adapter must share. Each test writes to its own streams (a
 * random category prefix), so the suite can run against a shared, non-empty server.
 */
export function describeEventStoreContract(
  name: string,
  factory: () => Promise<{ store: EventStore; cleanup: () => Promise<void> }>,
): void {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    let cleanup: () => Promise<void>;
    const subscriptions: Subscription[] = [];

    beforeAll(async () => {
      ({ store, cleanup } = await factory());
    });
    afterEach(async () => {
      await Promise.all(subscriptions.splice(0).map((subscription) => subscription.stop()));
    });
    afterAll(async () => {
      await cleanup();
    });

    /** A category no other test (or other run against the same server) uses. */
    const newCategory = (): string => `c${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const happened = (n: number, type = 'test.v1.happened'): EventData => ({ type, data: { n }, metadata: { actor: 'system' } });
    const numbers = (events: RecordedEvent[]): number[] => events.map((e) => (e.data as { n: number }).n);
    const subscribe = (...args: Parameters<EventStore['subscribeToAll']>): Subscription => {
      const subscription = store.subscribeToAll(...args);
      subscriptions.push(subscription);
      return subscription;
    };
    const expectConflict = async (append: Promise<unknown>, actual: number | 'no_stream'): Promise<void> => {
      const error = await append.then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(WrongExpectedRevisionError);
      expect((error as WrongExpectedRevisionError).actual).toBe(actual);
    };

    describe('append and read', () => {
      it('reads back a stream in order with revisions, positions, metadata and recording time', async () => {
        const stream = `${newCategory()}-1`;
        const before = Date.now();
        const result = await store.appendToStream(stream, [happened(1), happened(2), happened(3)], 'no_stream');

        const events = await store.readStream(stream);
        expect(numbers(events)).toEqual([1, 2, 3]);
        expect(events.map((e) => e.revision)).toEqual([0, 1, 2]);
        expect(events.every((e) => e.streamId === stream && e.type === 'test.v1.happened')).toBe(true);
        expect(events[0].metadata).toMatchObject({ actor: 'system' });
        expect(new Set(events.map((e) => e.id)).size).toBe(3);
        expect(events[1].position).toBeGreaterThan(events[0].position);
        expect(events[2].position).toBeGreaterThan(events[1].position);
        expect(events[0].recordedAt).toBeGreaterThanOrEqual(before - 60_000);
        expect(result).toEqual({ nextRevision: 2, position: events[2].position });
      });

      it('continues revisions across appends and stores an event without metadata with empty metadata', async () => {
        const stream = `${newCategory()}-1`;
        await store.appendToStream(stream, [happened(1)], 'no_stream');
        const result = await store.appendToStream(stream, [{ type: 'test.v1.bare', data: { n: 2 } }], 0);

        expect(result.nextRevision).toBe(1);
        const events = await store.readStream(stream);
        expect(events[1]).toMatchObject({ revision: 1, type: 'test.v1.bare', data: { n: 2 }, metadata: {} });
      });

      it('reads an unknown stream as empty', async () => {
        expect(await store.readStream(`${newCategory()}-missing`)).toEqual([]);
      });

      it('reads part of a stream from a revision, up to a count', async () => {
        const stream = `${newCategory()}-1`;
        await store.appendToStream(stream, [1, 2, 3, 4, 5].map((n) => happened(n)), 'no_stream');

        expect(numbers(await store.readStream(stream, { fromRevision: 2 }))).toEqual([3, 4, 5]);
        expect(numbers(await store.readStream(stream, { fromRevision: 1, maxCount: 2 }))).toEqual([2, 3]);
        expect(await store.readStream(stream, { fromRevision: 5 })).toEqual([]);
      });

      it('reports the newest global position as the head', async () => {
        const { position } = await store.appendToStream(`${newCategory()}-1`, [happened(1)], 'no_stream');
        expect(await store.headPosition()).toBeGreaterThanOrEqual(position);
      });
    });

    describe('expected revision', () => {
      it("'no_stream' creates a stream and refuses an existing one", async () => {
        const stream = `${newCategory()}-1`;
        await store.appendToStream(stream, [happened(1)], 'no_stream');
        await expectConflict(store.appendToStream(stream, [happened(2)], 'no_stream'), 0);
      });

      it("'stream_exists' refuses a missing stream and appends to an existing one", async () => {
        const stream = `${newCategory()}-1`;
        await expectConflict(store.appendToStream(stream, [happened(1)], 'stream_exists'), 'no_stream');
        await store.appendToStream(stream, [happened(1)], 'no_stream');
        expect((await store.appendToStream(stream, [happened(2)], 'stream_exists')).nextRevision).toBe(1);
      });

      it("'any' appends whether or not the stream exists", async () => {
        const stream = `${newCategory()}-1`;
        expect((await store.appendToStream(stream, [happened(1)], 'any')).nextRevision).toBe(0);
        expect((await store.appendToStream(stream, [happened(2)], 'any')).nextRevision).toBe(1);
      });

      it('a revision number must be the revision of the last event', async () => {
        const stream = `${newCategory()}-1`;
        await expectConflict(store.appendToStream(stream, [happened(1)], 0), 'no_stream');
        await store.appendToStream(stream, [happened(1), happened(2)], 'no_stream');
        await expectConflict(store.appendToStream(stream, [happened(3)], 0), 1);
        await expectConflict(store.appendToStream(stream, [happened(3)], 2), 1);
        expect((await store.appendToStream(stream, [happened(3)], 1)).nextRevision).toBe(2);
      });

      it('a refused append writes none of its events', async () => {
        const stream = `${newCategory()}-1`;
        await store.appendToStream(stream, [happened(1)], 'no_stream');
        await expectConflict(store.appendToStream(stream, [happened(2), happened(3)], 5), 0);
        expect(numbers(await store.readStream(stream))).toEqual([1]);
      });

      it('of concurrent appends expecting the same revision, exactly one wins', async () => {
        const stream = `${newCategory()}-1`;
        await store.appendToStream(stream, [happened(0)], 'no_stream');

        const results = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) => store.appendToStream(stream, [happened(i + 1)], 0)),
        );

        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost.every((r) => r.reason instanceof WrongExpectedRevisionError)).toBe(true);
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('concurrent appends to different streams all succeed; a refused one among them writes nothing', async () => {
        const category = newCategory();
        await store.appendToStream(`${category}-taken`, [happened(0)], 'no_stream');

        const results = await Promise.allSettled([
          ...Array.from({ length: 20 }, (_, i) => store.appendToStream(`${category}-${i}`, [happened(i), happened(i)], 'no_stream')),
          store.appendToStream(`${category}-taken`, [happened(99)], 'no_stream'),
        ]);

        const written = results.slice(0, 20).map((r) => (r as PromiseFulfilledResult<{ nextRevision: number; position: number }>).value);
        expect(written.every((result) => result?.nextRevision === 1)).toBe(true);
        expect(new Set(written.map((result) => result.position)).size).toBe(20);
        expect((results[20] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
        expect(numbers(await store.readStream(`${category}-7`))).toEqual([7, 7]);
        expect(numbers(await store.readStream(`${category}-taken`))).toEqual([0]);
      });

      it('of concurrent creations of one stream, exactly one wins', async () => {
        const stream = `${newCategory()}-1`;
        const results = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) => store.appendToStream(stream, [happened(i)], 'no_stream')),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect(await store.readStream(stream)).toHaveLength(1);
      });
    });

    describe('reading $all', () => {
      it('orders every stream by global position, after a position, up to a count', async () => {
        const category = newCategory();
        const head = await store.headPosition();
        await store.appendToStream(`${category}-a`, [happened(1)], 'no_stream');
        await store.appendToStream(`${category}-b`, [happened(2)], 'no_stream');
        await store.appendToStream(`${category}-a`, [happened(3)], 0);
        await store.appendToStream(`${category}-c`, [happened(4), happened(5)], 'no_stream');
        const filter = { streamPrefixes: [category] };

        const all = await store.readAll({ after: head, maxCount: 100, filter });
        expect(numbers(all)).toEqual([1, 2, 3, 4, 5]);
        expect(all.map((e) => e.position)).toEqual([...all.map((e) => e.position)].sort((x, y) => x - y));

        expect(numbers(await store.readAll({ after: head, maxCount: 2, filter }))).toEqual([1, 2]);
        expect(numbers(await store.readAll({ after: all[1].position, maxCount: 2, filter }))).toEqual([3, 4]);
        expect(await store.readAll({ after: all[4].position, maxCount: 10, filter })).toEqual([]);
      });

      it('filters by stream prefixes and by event type prefixes; both together must both match', async () => {
        const category = newCategory();
        const other = newCategory();
        const head = await store.headPosition();
        await store.appendToStream(`${category}-a`, [happened(1, 'quote.v1.created')], 'no_stream');
        await store.appendToStream(`${other}-a`, [happened(2, 'quote.v1.created')], 'no_stream');
        await store.appendToStream(`${category}-b`, [happened(3, 'lead.v1.created')], 'no_stream');
        await store.appendToStream(`${newCategory()}-a`, [happened(4)], 'no_stream');
        const read = (filter: { streamPrefixes?: string[]; eventTypePrefixes?: string[] }) =>
          store.readAll({ after: head, maxCount: 100, filter }).then(numbers);

        expect(await read({ streamPrefixes: [category] })).toEqual([1, 3]);
        expect(await read({ streamPrefixes: [`${category}-b`, other] })).toEqual([2, 3]);
        expect(await read({ streamPrefixes: [category], eventTypePrefixes: ['quote.'] })).toEqual([1]);
        expect(await read({ streamPrefixes: [category, other], eventTypePrefixes: ['quote.v1', 'lead.'] })).toEqual([1, 2, 3]);
        expect(await read({ streamPrefixes: [category.toUpperCase()] })).toEqual([]);
      });
    });

    describe('subscribing to $all', () => {
      /** Records what a subscription's handler completed. */
      const collector = () => {
        const handled: RecordedEvent[] = [];
        return { handled, handler: async (event: RecordedEvent) => void handled.push(event) };
      };

      it('catches up on history, then follows live appends, each event once and in order', async () => {
        const category = newCategory();
        const head = await store.headPosition();
        await store.appendToStream(`${category}-a`, [happened(1), happened(2)], 'no_stream');
        await store.appendToStream(`${category}-b`, [happened(3)], 'no_stream');
        const { handled, handler } = collector();

        const subscription = subscribe({ after: head, filter: { streamPrefixes: [category] }, handler });
        await waitFor(() => handled.length === 3);
        await store.appendToStream(`${category}-a`, [happened(4)], 1);
        await store.appendToStream(`${newCategory()}-x`, [happened(99)], 'no_stream');
        await store.appendToStream(`${category}-c`, [happened(5), happened(6)], 'no_stream');
        await waitFor(() => handled.length === 6);

        expect(numbers(handled)).toEqual([1, 2, 3, 4, 5, 6]);
        expect(subscription.position).toBe(handled[5].position);
      });

      it('delivers only events after the given position', async () => {
        const category = newCategory();
        await store.appendToStream(`${category}-a`, [happened(1), happened(2)], 'no_stream');
        const { position } = await store.appendToStream(`${category}-a`, [happened(3)], 1);
        await store.appendToStream(`${category}-a`, [happened(4)], 2);
        const { handled, handler } = collector();

        subscribe({ after: position, filter: { streamPrefixes: [category] }, handler });
        await waitFor(() => handled.length >= 1);
        await store.appendToStream(`${category}-a`, [happened(5)], 3);
        await waitFor(() => handled.length === 2);

        expect(numbers(handled)).toEqual([4, 5]);
      });

      it('resumes from the position of a stopped subscription without repeating or missing events', async () => {
        const category = newCategory();
        const head = await store.headPosition();
        await store.appendToStream(`${category}-a`, [happened(1), happened(2)], 'no_stream');
        const first = collector();
        const subscription = subscribe({ after: head, filter: { streamPrefixes: [category] }, handler: first.handler });
        await waitFor(() => first.handled.length === 2);
        await subscription.stop();

        await store.appendToStream(`${category}-a`, [happened(3), happened(4)], 1);
        await sleep(50);
        expect(numbers(first.handled)).toEqual([1, 2]);

        const second = collector();
        subscribe({ after: subscription.position, filter: { streamPrefixes: [category] }, handler: second.handler });
        await waitFor(() => second.handled.length === 2);
        expect(numbers(second.handled)).toEqual([3, 4]);
      });

      it('retries a failing event after reporting the error, never skipping it', async () => {
        const category = newCategory();
        const head = await store.headPosition();
        const errors: unknown[] = [];
        const handled: number[] = [];
        let failuresLeft = 2;

        subscribe({
          after: head,
          filter: { streamPrefixes: [category] },
          handler: async (event) => {
            const { n } = event.data as { n: number };
            if (n === 2 && failuresLeft > 0) {
              failuresLeft -= 1;
              throw new Error('projection bug');
            }
            handled.push(n);
          },
          onError: (error) => errors.push(error),
        });
        await store.appendToStream(`${category}-a`, [happened(1), happened(2), happened(3)], 'no_stream');
        await waitFor(() => handled.length === 3);

        expect(handled).toEqual([1, 2, 3]);
        expect(errors).toHaveLength(2);
        expect((errors[0] as Error).message).toBe('projection bug');
      });

      it('hands a batch handler every event once, in order, in non-empty batches', async () => {
        const category = newCategory();
        const head = await store.headPosition();
        await store.appendToStream(`${category}-a`, [happened(1), happened(2), happened(3)], 'no_stream');
        const batches: RecordedEvent[][] = [];

        const subscription = subscribe({ after: head, filter: { streamPrefixes: [category] }, handleBatch: async (events) => void batches.push(events) });
        await waitFor(() => batches.flat().length === 3);
        await store.appendToStream(`${category}-b`, [happened(4)], 'no_stream');
        await store.appendToStream(`${category}-a`, [happened(5)], 2);
        await waitFor(() => batches.flat().length === 5);

        expect(numbers(batches.flat())).toEqual([1, 2, 3, 4, 5]);
        expect(batches.every((batch) => batch.length > 0)).toBe(true);
        expect(subscription.position).toBe(batches.flat()[4].position);
      });

      it('hands a failing batch over again, whole, after reporting the error', async () => {
        const category = newCategory();
        const head = await store.headPosition();
        const errors: unknown[] = [];
        const attempts: number[][] = [];
        const handled: number[] = [];
        let failuresLeft = 1;

        subscribe({
          after: head,
          filter: { streamPrefixes: [category] },
          handleBatch: async (events) => {
            attempts.push(numbers(events));
            if (failuresLeft-- > 0) throw new Error('relay down');
            handled.push(...numbers(events));
          },
          onError: (error) => errors.push(error),
        });
        await store.appendToStream(`${category}-a`, [happened(1), happened(2)], 'no_stream');
        await waitFor(() => handled.length === 2);

        expect(attempts[1]).toEqual(attempts[0]);
        expect(handled).toEqual([1, 2]);
        expect(errors).toHaveLength(1);
        expect((errors[0] as Error).message).toBe('relay down');
      });

      it('stop() waits for the event in hand and delivers nothing after it', async () => {
        const category = newCategory();
        const head = await store.headPosition();
        const handled: number[] = [];
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let inHandler = false;

        const subscription = subscribe({
          after: head,
          filter: { streamPrefixes: [category] },
          handler: async (event) => {
            inHandler = true;
            await gate;
            handled.push((event.data as { n: number }).n);
          },
        });
        const { position } = await store.appendToStream(`${category}-a`, [happened(1)], 'no_stream');
        await store.appendToStream(`${category}-a`, [happened(2)], 0);
        try {
          await waitFor(() => inHandler);
          let stopped = false;
          const stopping = subscription.stop().then(() => (stopped = true));
          await sleep(30);
          expect(stopped).toBe(false);
          release();
          await stopping;
        } finally {
          release();
        }
        await sleep(30);

        expect(handled).toEqual([1]);
        expect(subscription.position).toBe(position);
      });
    });
  });
}

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
