import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore, type EventStore, type ReadAllOptions } from '@lib/event-store';
import { type BulkWriter, type IndexSpec, ReadStore, SqliteReadStore } from '@lib/read-store';
import { ActiveProjectionReadStore, readPointers } from './active-projections';
import { rebuildProjections } from './projection-rebuild';
import { checkpointName, type Projection } from './projection';
import { applyEvents } from './projection-runner';

/** Counts the events of each stream; version 2 also counts them twice, to tell the versions apart. */
const counter = (version: number): Projection => ({
  name: 'counter',
  version,
  collections: { counts: [{ fields: [{ field: 'count', direction: 'desc' }, { field: 'id', direction: 'asc' }] }] },
  filter: { streamPrefixes: ['thing-'] },
  async handle(event, context) {
    const current = await context.get<{ id: string; count: number }>('counts', event.streamId);
    context.put('counts', { id: event.streamId, count: (current?.count ?? 0) + version });
  },
});

/** The log as a store that returns no event after `position`, though its head is further on. */
const emptyAfter = (log: EventStore, position: number): EventStore =>
  Object.assign(Object.create(log) as EventStore, {
    readAll: async (options: ReadAllOptions) => (options.after >= position ? [] : log.readAll({ ...options, maxCount: Math.min(options.maxCount, position - options.after) })),
  });

describe('rebuildProjections', () => {
  let events: SqliteEventStore;
  let engine: SqliteReadStore;
  let reads: ActiveProjectionReadStore;

  beforeEach(async () => {
    events = new SqliteEventStore({ file: ':memory:' });
    engine = new SqliteReadStore({ file: ':memory:' });
    // refresh 0: every read sees the latest pointer (gateways use 250 ms)
    reads = new ActiveProjectionReadStore(engine, 0);
    for (let i = 0; i < 30; i++) await events.appendToStream(`thing-${i % 3}`, [{ type: 'thing.v1.happened', data: {} }], 'any');
  });

  afterEach(async () => {
    await reads.close();
    await events.close();
  });

  it('builds the next generation beside the live one, switches readers to it and drops the old one', async () => {
    const v1 = counter(1);
    await applyEvents(engine, v1, await events.readAll({ after: 0, maxCount: 10 }), checkpointName(v1));
    expect(await reads.get('counts_v1', 'thing-0')).toMatchObject({ count: 4 });

    const seenWhileBuilding: unknown[] = [];
    const result = await rebuildProjections({
      events,
      store: reads,
      projections: [v1],
      batchSize: 7,
      switchGraceMs: 0,
      onProgress: async (progress) => {
        if (progress.phase === 'building') seenWhileBuilding.push((await reads.get('counts_v1', 'thing-0'))?.count);
      },
    });
    expect(result).toMatchObject({ projections: [{ name: 'counter', version: 1, from: 0, to: 1 }], position: 30, dropped: ['counts_v1'] });
    expect(new Set(seenWhileBuilding)).toEqual(new Set([4]));
    expect(await reads.get('counts_v1', 'thing-0')).toMatchObject({ count: 10 });
    expect(await engine.listCollections()).toEqual(['counts_v1_g1', 'projection_pointers']);
    expect(await engine.getCheckpoint('projection:counter:v1:g1')).toBe(30);
    // The dropped generation's checkpoint goes with it; after the next rebuild, g1's too.
    expect(await engine.getCheckpoint(checkpointName(v1))).toBeNull();
    await rebuildProjections({ events, store: reads, projections: [v1], switchGraceMs: 0 });
    expect([await engine.getCheckpoint('projection:counter:v1:g1'), await engine.getCheckpoint('projection:counter:v1:g2')]).toEqual([null, 30]);
  });

  it.each([
    ['a page of no events', { batchSize: 0 }],
    ['a negative page size', { batchSize: -1 }],
    ['a page size that is no whole number', { batchSize: 1.5 }],
    ['a page size that is no number', { batchSize: Number.NaN }],
    ['a negative grace period', { switchGraceMs: -1 }],
    ['a grace period that is no number', { switchGraceMs: Number.NaN }],
    ['a grace period that never ends', { switchGraceMs: Number.POSITIVE_INFINITY }],
  ])('given %s, then it refuses with a RangeError before it writes anything, and the live generation stays', async (_case, options) => {
    const v1 = counter(1);
    await rebuildProjections({ events, store: reads, projections: [v1], switchGraceMs: 0 });
    await expect(rebuildProjections({ events, store: reads, projections: [v1], switchGraceMs: 0, ...options })).rejects.toThrow(RangeError);
    expect((await readPointers(engine)).get('counter@v1')).toMatchObject({ generation: 1 });
    expect(await engine.listCollections()).toEqual(['counts_v1_g1', 'projection_pointers']);
    expect(await reads.get('counts_v1', 'thing-0')).toMatchObject({ count: 10 });
  });

  it('given a log that returns no events short of the head it reported, then it fails without switching, and the live generation stays', async () => {
    const v1 = counter(1);
    await rebuildProjections({ events, store: reads, projections: [v1], switchGraceMs: 0 });
    const rebuilding = rebuildProjections({ events: emptyAfter(events, 10), store: reads, projections: [v1], batchSize: 7, switchGraceMs: 0 });
    await expect(rebuilding).rejects.toThrow('the event log returned no events after position 10, below its head 30: the rebuild did not switch');
    expect((await readPointers(engine)).get('counter@v1')).toMatchObject({ generation: 1 });
    expect(await reads.get('counts_v1', 'thing-0')).toMatchObject({ count: 10 });
    expect(await engine.getCheckpoint('projection:counter:v1:g2')).toBe(10);
  });

  it('keeps applying new events during the grace period after the switch', async () => {
    let appended = false;
    await rebuildProjections({
      events,
      store: reads,
      projections: [counter(1)],
      switchGraceMs: 300,
      onProgress: (progress) => {
        if (progress.phase === 'switched' && !appended) {
          appended = true;
          void events.appendToStream('thing-0', [{ type: 'thing.v1.happened', data: {} }], 'any');
        }
      },
    });
    expect(await reads.get('counts_v1', 'thing-0')).toMatchObject({ count: 11 });
  });

  it('drops only the generations older than its own: a rebuild started since keeps the one it builds', async () => {
    const v1 = counter(1);
    await applyEvents(engine, v1, await events.readAll({ after: 0, maxCount: 10 }), checkpointName(v1));
    let startedSince = false;
    const result = await rebuildProjections({
      events,
      store: reads,
      projections: [v1],
      switchGraceMs: 0,
      onProgress: async (progress) => {
        if (progress.phase !== 'switched' || startedSince) return;
        startedSince = true;
        // What a second rebuild, started during this one's grace period, has written of generation 2.
        await engine.upsert([{ collection: 'counts_v1_g2', document: { id: 'thing-0', count: 4 } }], { name: 'projection:counter:v1:g2', position: 10 });
      },
    });
    expect(result.dropped).toEqual(['counts_v1']);
    expect(await engine.listCollections()).toEqual(['counts_v1_g1', 'counts_v1_g2', 'projection_pointers']);
  });

  it('drops what a switch left behind only once that switch’s grace period is over', async () => {
    const v1 = counter(1);
    await rebuildProjections({ events, store: reads, projections: [v1], switchGraceMs: 0 });
    // As a rebuild stopped after its switch leaves it: generation 1 live, generation 0 still there.
    await engine.upsert([{ collection: 'counts_v1', document: { id: 'thing-0', count: 1 } }]);
    const started = performance.now();
    let firstReport: number | null = null;
    const result = await rebuildProjections({ events, store: reads, projections: [v1], switchGraceMs: 500, onProgress: () => void (firstReport ??= performance.now()) });
    expect(firstReport! - started).toBeGreaterThanOrEqual(400);
    expect(result.dropped).toEqual(['counts_v1', 'counts_v1_g1']);
  });

  it('a new version goes live beside the old one: readers of the old code keep their generation', async () => {
    await rebuildProjections({ events, store: reads, projections: [counter(1)], switchGraceMs: 0 });
    await rebuildProjections({ events, store: reads, projections: [counter(2)], switchGraceMs: 0 });
    expect(await reads.get('counts_v1', 'thing-1')).toMatchObject({ count: 10 });
    expect(await reads.get('counts_v2', 'thing-1')).toMatchObject({ count: 20 });
    expect(await engine.listCollections()).toEqual(['counts_v1_g1', 'counts_v2_g1', 'projection_pointers']);
  });
});

/** Every event's position, in the order applied, per stream: a lost, repeated or reordered event shows. */
const ledger: Projection = {
  name: 'ledger',
  version: 1,
  collections: { ledgers: [] },
  filter: { streamPrefixes: ['thing-'] },
  async handle(event, context) {
    const current = await context.get<{ id: string; positions: number[] }>('ledgers', event.streamId);
    context.put('ledgers', { id: event.streamId, positions: [...(current?.positions ?? []), event.position] });
  },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Its writer takes 20 ms before it stores a page: the rebuild projects the next page meanwhile. */
class SlowlyWrittenStore extends SqliteReadStore {
  override openBulkWriter(): BulkWriter {
    const writer = super.openBulkWriter();
    return {
      atomic: writer.atomic,
      write: async (writes, checkpoints) => {
        await sleep(20);
        return writer.write(writes, checkpoints);
      },
      close: () => writer.close(),
    };
  }
}

/** Counts the writers it opened and closed. */
class CountingWritersStore extends SqliteReadStore {
  opened = 0;
  closed = 0;
  override openBulkWriter(): BulkWriter {
    const writer = super.openBulkWriter();
    this.opened += 1;
    return {
      atomic: writer.atomic,
      write: (writes, checkpoints) => writer.write(writes, checkpoints),
      close: async () => {
        await writer.close();
        this.closed += 1;
      },
    };
  }
}

/** The port's default writer: checkpoints after the writes, not atomically with them. */
class DefaultWriterStore extends SqliteReadStore {
  override openBulkWriter(): BulkWriter {
    return ReadStore.prototype.openBulkWriter.call(this);
  }
}

describe('rebuildProjections into database files', () => {
  const STREAMS = 5;
  const EVENTS = 300;
  let dir: string;
  let events: SqliteEventStore;
  let engine: SqliteReadStore;
  const positionsOf = (stream: number) => Array.from({ length: EVENTS / STREAMS }, (_, i) => i * STREAMS + stream + 1);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rebuild-'));
    events = new SqliteEventStore({ file: join(dir, 'events.db') });
    for (let i = 0; i < EVENTS; i++) await events.appendToStream(`thing-${i % STREAMS}`, [{ type: 'thing.v1.happened', data: {} }], 'any');
  });

  afterEach(async () => {
    await engine.close();
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['the store’s own writer, which stores each page on its thread while the next is projected', SqliteReadStore],
    ['a writer slower than the projection, so each page reads what the page before wrote from memory', SlowlyWrittenStore],
    ['the default writer, whose checkpoints are not atomic with the writes (no page projected ahead)', DefaultWriterStore],
  ])('with %s, builds what applying every event in order builds', async (_writer, Store) => {
    engine = new Store({ file: join(dir, 'read-models.db') });
    // Pages of 7 events over 5 streams: every page reads documents the page before wrote.
    const result = await rebuildProjections({ events, store: engine, projections: [ledger], batchSize: 7, switchGraceMs: 0 });
    expect(result).toMatchObject({ position: EVENTS, events: EVENTS, projections: [{ name: 'ledger', from: 0, to: 1 }] });
    for (let stream = 0; stream < STREAMS; stream++) {
      expect(await engine.get('ledgers_v1_g1', `thing-${stream}`)).toMatchObject({ positions: positionsOf(stream) });
    }
    expect(await engine.getCheckpoint('projection:ledger:v1:g1')).toBe(EVENTS);
  });

  it('with the default writer, reads the log again after it builds the indexes, so it switches only once current', async () => {
    class AppendedToWhileIndexing extends DefaultWriterStore {
      override async ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<void> {
        if (collection === 'ledgers_v1_g1') await events.appendToStream('thing-0', [{ type: 'thing.v1.happened', data: {} }], 'any');
        return super.ensureIndexes(collection, indexes);
      }
    }
    engine = new AppendedToWhileIndexing({ file: join(dir, 'read-models.db') });
    const switchedAt: number[] = [];
    await rebuildProjections({
      events,
      store: engine,
      projections: [ledger],
      batchSize: 7,
      switchGraceMs: 0,
      onProgress: (progress) => void (progress.phase === 'switched' && switchedAt.push(progress.position)),
    });
    expect(switchedAt[0]).toBe(EVENTS + 1);
  });

  it('stores what came before a failing handler with its checkpoint, does not switch, and the next run continues from there', async () => {
    engine = new SqliteReadStore({ file: join(dir, 'read-models.db') });
    const failing: Projection = {
      ...ledger,
      async handle(event, context) {
        if (event.position === 200) throw new Error('cannot apply');
        await ledger.handle(event, context);
      },
    };
    await expect(rebuildProjections({ events, store: engine, projections: [failing], batchSize: 7, switchGraceMs: 0 })).rejects.toMatchObject({
      name: 'ProjectionFailed',
      position: 200,
      appliedUpTo: 199,
    });
    expect(await engine.getCheckpoint('projection:ledger:v1:g1')).toBe(199);
    expect((await readPointers(engine)).size).toBe(0);
    const stored = await engine.find<{ id: string; positions: number[] }>('ledgers_v1_g1', { sort: [], limit: STREAMS });
    expect(stored.items.flatMap((ledger) => ledger.positions).sort((a, b) => a - b)).toEqual(Array.from({ length: 199 }, (_, i) => i + 1));

    const resumed = await rebuildProjections({ events, store: engine, projections: [ledger], batchSize: 7, switchGraceMs: 0 });
    expect(resumed).toMatchObject({ resumedFrom: 199, position: EVENTS, projections: [{ to: 1 }] });
    for (let stream = 0; stream < STREAMS; stream++) {
      expect(await engine.get('ledgers_v1_g1', `thing-${stream}`)).toMatchObject({ positions: positionsOf(stream) });
    }
  });

  it('a progress report that throws stops the rebuild, which closes its writer (its thread would keep the process alive)', async () => {
    const counting = new CountingWritersStore({ file: join(dir, 'read-models.db') });
    engine = counting;
    const stopping = rebuildProjections({
      events,
      store: engine,
      projections: [ledger],
      batchSize: 7,
      onProgress: (progress) => {
        if (progress.position > 0) throw new Error('stopped half-way');
      },
    });
    await expect(stopping).rejects.toThrow('stopped half-way');
    expect([counting.opened, counting.closed]).toEqual([1, 1]);
    expect(await engine.getCheckpoint('projection:ledger:v1:g1')).toBe(7);
  });
});
