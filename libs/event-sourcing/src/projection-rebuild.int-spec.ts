import { SqliteEventStore } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import { ActiveProjectionReadStore } from './active-projections';
import type { Projection } from './projection';
import { rebuildProjections } from './projection-rebuild';
import { applyEvents, checkpointName } from './projection-runner';

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

  it('a new version goes live beside the old one: readers of the old code keep their generation', async () => {
    await rebuildProjections({ events, store: reads, projections: [counter(1)], switchGraceMs: 0 });
    await rebuildProjections({ events, store: reads, projections: [counter(2)], switchGraceMs: 0 });
    expect(await reads.get('counts_v1', 'thing-1')).toMatchObject({ count: 10 });
    expect(await reads.get('counts_v2', 'thing-1')).toMatchObject({ count: 20 });
    expect(await engine.listCollections()).toEqual(['counts_v1_g1', 'counts_v2_g1', 'projection_pointers']);
  });
});
