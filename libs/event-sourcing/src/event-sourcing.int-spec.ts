import { SqliteEventStore, type EventData } from '@lib/event-store';
import { SqliteReadStore } from '@lib/read-store';
import { ConcurrentModification, Unavailable, WriteStoredNotYetVisible } from '@lib/shared';
import { ActiveProjectionReadStore, PROJECTION_POINTERS, pointerTo } from './active-projections';
import { AggregateRepository } from './aggregate-repository';
import type { Decider } from './decider';
import { atGeneration, checkpointName, collectionName, type Projection } from './projection';
import { applyEvent, applyEvents, startProjection, startProjections } from './projection-runner';
import { ReadYourWrites } from './read-your-writes';

type CounterEvent = EventData<'counter.v1.incremented', { id: string; by: number }>;
type CounterCommand = { type: 'increment'; id: string; by: number; max?: number };
const counter: Decider<{ total: number }, CounterCommand, CounterEvent> = {
  initialState: () => ({ total: 0 }),
  decide: (command, state) => {
    if (command.max !== undefined && state.total + command.by > command.max) throw new Error('over the maximum');
    return command.by === 0 ? [] : [{ type: 'counter.v1.incremented', data: { id: command.id, by: command.by } }];
  },
  evolve: (state, event) => ({ total: state.total + event.data.by }),
};

const counters: Projection = {
  name: 'counters',
  version: 1,
  collections: { counters: [] },
  filter: { streamPrefixes: ['counter-'] },
  async handle(event, context) {
    const data = event.data as { id: string; by: number };
    const doc = (await context.get<{ id: string; total: number }>('counters', data.id)) ?? { id: data.id, total: 0 };
    context.put('counters', { ...doc, total: doc.total + data.by });
  },
};

/** Counts every counter event; throws on the ones `failing` names while it is set. */
function tally(failing: { ids: Set<string> }): Projection {
  return {
    name: 'tally',
    version: 1,
    collections: { tallies: [] },
    filter: { streamPrefixes: ['counter-'] },
    async handle(event, context) {
      const data = event.data as { id: string };
      if (failing.ids.has(data.id)) throw new Error(`cannot tally ${data.id}`);
      const doc = (await context.get<{ id: string; events: number }>('tallies', 'all')) ?? { id: 'all', events: 0 };
      context.put('tallies', { ...doc, events: doc.events + 1 });
    },
  };
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 250 && !(await condition()); i++) await new Promise((r) => setTimeout(r, 20));
}

describe('event-sourcing core on the embedded stores', () => {
  let events: SqliteEventStore;
  let reads: SqliteReadStore;
  let readYourWrites: ReadYourWrites;
  let repository: AggregateRepository;

  beforeEach(() => {
    events = new SqliteEventStore({ file: ':memory:' });
    reads = new SqliteReadStore({ file: ':memory:' });
    readYourWrites = new ReadYourWrites();
    repository = new AggregateRepository(events, readYourWrites);
  });
  afterEach(async () => {
    await events.close();
    await reads.close();
  });

  it('decides on the folded state and appends with the expected revision', async () => {
    await repository.handle(counter, 'counter-a', { type: 'increment', id: 'a', by: 2 });
    const result = await repository.handle(counter, 'counter-a', { type: 'increment', id: 'a', by: 3 });
    expect(result.state.total).toBe(5);
    expect(result.revision).toBe(1);
    await expect(repository.handle(counter, 'counter-a', { type: 'increment', id: 'a', by: 1, max: 5 })).rejects.toThrow('over the maximum');
    expect(await events.readStream('counter-a')).toHaveLength(2);
  });

  it('folds on from its cache, including events another process appended meanwhile', async () => {
    const elsewhere = new AggregateRepository(events, new ReadYourWrites());
    await repository.handle(counter, 'counter-g', { type: 'increment', id: 'g', by: 1 });
    await elsewhere.handle(counter, 'counter-g', { type: 'increment', id: 'g', by: 10 });
    await events.appendToStream('counter-g', [{ type: 'counter.v1.incremented', data: { id: 'g', by: 100 } }], 1);
    expect(await repository.load(counter, 'counter-g')).toMatchObject({ state: { total: 111 }, revision: 2 });
    const result = await repository.handle(counter, 'counter-g', { type: 'increment', id: 'g', by: 1000 });
    expect(result.state.total).toBe(1111);
    expect((await new AggregateRepository(events, new ReadYourWrites()).load(counter, 'counter-g')).state.total).toBe(1111);
  });

  it('loses no update when writers race: conflicts are decided again on fresh state', async () => {
    await Promise.all(Array.from({ length: 20 }, () => repository.handle(counter, 'counter-b', { type: 'increment', id: 'b', by: 1 }, { maxAttempts: 50 })));
    expect((await repository.load(counter, 'counter-b')).state.total).toBe(20);
  });

  it('surfaces a conflict that outlasts the retries as ConcurrentModification', async () => {
    const racing = new AggregateRepository(
      {
        ...events,
        readStream: (id: string) => events.readStream(id),
        appendToStream: async (id: string, e: EventData[]) => {
          await events.appendToStream(id, e, 'any');
          return events.appendToStream(id, e, 0);
        },
      } as unknown as SqliteEventStore,
      readYourWrites,
    );
    await repository.handle(counter, 'counter-c', { type: 'increment', id: 'c', by: 1 });
    await expect(racing.handle(counter, 'counter-c', { type: 'increment', id: 'c', by: 1 }, { maxAttempts: 2 })).rejects.toBeInstanceOf(ConcurrentModification);
  });

  it('applies an event to a projection once, however often it is replayed', async () => {
    await repository.handle(counter, 'counter-d', { type: 'increment', id: 'd', by: 4 }, { awaitProjections: false });
    const [event] = await events.readAll({ after: 0, maxCount: 10 });
    expect(await applyEvent(reads, counters, event)).toBe(1);
    expect(await applyEvent(reads, counters, event)).toBe(0);
    expect(await reads.get(collectionName(counters, 'counters'), 'd')).toMatchObject({ total: 4 });
  });

  it('returns a write only after the projection has applied it, and resumes from its checkpoint', async () => {
    readYourWrites.track([counters.name]);
    const running = await startProjection(events, reads, counters, (p) => readYourWrites.report(counters.name, p));
    await repository.handle(counter, 'counter-e', { type: 'increment', id: 'e', by: 1 });
    expect(await reads.get(collectionName(counters, 'counters'), 'e')).toMatchObject({ total: 1 });
    await running.stop();
    await events.appendToStream('counter-e', [{ type: 'counter.v1.incremented', data: { id: 'e', by: 10 } }], 0);
    const resumed = await startProjection(events, reads, counters, () => undefined);
    for (let i = 0; i < 50 && (await reads.getCheckpoint(checkpointName(counters))) !== (await events.headPosition()); i++) await new Promise((r) => setTimeout(r, 20));
    await resumed.stop();
    expect(await reads.get(collectionName(counters, 'counters'), 'e')).toMatchObject({ total: 11 });
  });

  it('moves its stored checkpoint past events it ignores, so gateways in other processes see it current', async () => {
    const running = await startProjection(events, reads, counters, () => undefined);
    await events.appendToStream('other-x', [{ type: 'other.v1.happened', data: {} }], 'no_stream');
    const head = await events.headPosition();
    for (let i = 0; i < 100 && (await reads.getCheckpoint(checkpointName(counters))) !== head; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await reads.getCheckpoint(checkpointName(counters))).toBe(head);
    await running.stop();
  });

  it('moves the stored checkpoints of a group past events its projections ignore', async () => {
    const tallies = tally({ ids: new Set() });
    const running = await startProjections(events, reads, [counters, tallies], () => undefined);
    await events.appendToStream('other-y', [{ type: 'other.v1.happened', data: {} }], 'no_stream');
    const head = await events.headPosition();
    await until(async () => (await reads.getCheckpoint(checkpointName(tallies))) === head);
    expect(await reads.getCheckpoint(checkpointName(counters))).toBe(head);
    expect(await reads.getCheckpoint(checkpointName(tallies))).toBe(head);
    await running.stop();
  });

  it('applies a batch like one event at a time, also over a store that already has part of it', async () => {
    for (const by of [1, 2, 4]) await repository.handle(counter, 'counter-k', { type: 'increment', id: 'k', by }, { awaitProjections: false });
    const history = await events.readAll({ after: 0, maxCount: 10 });
    await applyEvent(reads, counters, history[0]);
    await applyEvent(reads, counters, history[1]);

    expect(await applyEvents(reads, counters, history, checkpointName(counters))).toBe(1);

    expect(await reads.get(collectionName(counters, 'counters'), 'k')).toMatchObject({ total: 7 });
    expect(await reads.getCheckpoint(checkpointName(counters))).toBe(history[2].position);
    expect(await applyEvents(reads, counters, history)).toBe(0);
  });

  it('keeps several projections up to date from one reader, each with its own checkpoint', async () => {
    const tallies = tally({ ids: new Set() });
    readYourWrites.track([counters.name, tallies.name]);
    const running = await startProjections(events, reads, [counters, tallies], (projection, position) => readYourWrites.report(projection.name, position));
    await Promise.all(['h', 'i', 'h'].map((id) => repository.handle(counter, `counter-${id}`, { type: 'increment', id, by: 1 }, { maxAttempts: 20 })));
    await running.stop();

    expect(await reads.get(collectionName(counters, 'counters'), 'h')).toMatchObject({ total: 2 });
    expect(await reads.get(collectionName(tallies, 'tallies'), 'all')).toMatchObject({ events: 3 });
    const head = await events.headPosition();
    expect(await reads.getCheckpoint(checkpointName(counters))).toBe(head);
    expect(await reads.getCheckpoint(checkpointName(tallies))).toBe(head);
  });

  it('a failing projection stalls alone at the failing event and resumes where it stopped once it can apply it', async () => {
    const failing = { ids: new Set(['bad']) };
    const tallies = tally(failing);
    const running = await startProjections(events, reads, [counters, tallies], () => undefined);
    const { position: beforeBad } = await repository.handle(counter, 'counter-j', { type: 'increment', id: 'j', by: 1 }, { awaitProjections: false });
    await repository.handle(counter, 'counter-bad', { type: 'increment', id: 'bad', by: 1 }, { awaitProjections: false });
    await repository.handle(counter, 'counter-j', { type: 'increment', id: 'j', by: 1 }, { awaitProjections: false });

    const counted = () => reads.get<{ id: string; total: number }>(collectionName(counters, 'counters'), 'j');
    await until(async () => (await counted())?.total === 2);
    expect(await counted()).toMatchObject({ total: 2 });
    await until(async () => (await reads.getCheckpoint(checkpointName(tallies))) === beforeBad);
    expect(await reads.getCheckpoint(checkpointName(tallies))).toBe(beforeBad);
    expect(await reads.get(collectionName(tallies, 'tallies'), 'all')).toMatchObject({ events: 1 });

    failing.ids.clear();
    await until(async () => (await reads.get<{ id: string; events: number }>(collectionName(tallies, 'tallies'), 'all'))?.events === 3);
    await running.stop();
    expect(await reads.get(collectionName(tallies, 'tallies'), 'all')).toMatchObject({ events: 3 });
  });

  it('a projector of the old generation, still running after a switch, writes that generation only', async () => {
    // Through the pointers, it would write its next event into the new generation, ahead of events
    // that generation has not applied yet, and the new generation would then skip those for good.
    const active = new ActiveProjectionReadStore(reads, 0);
    const next = atGeneration(counters, 1);
    for (const by of [1, 2, 4]) await events.appendToStream('counter-m', [{ type: 'counter.v1.incremented', data: { id: 'm', by } }], 'any');
    const history = await events.readAll({ after: 0, maxCount: 10 });
    await applyEvents(reads, counters, history, checkpointName(counters));
    await applyEvents(reads, next, history.slice(0, 2), checkpointName(next));
    const old = await startProjections(events, active, [counters], () => undefined);
    await reads.upsert([{ collection: PROJECTION_POINTERS, document: pointerTo(next, 0) }]);

    const { position } = await events.appendToStream('counter-m', [{ type: 'counter.v1.incremented', data: { id: 'm', by: 8 } }], 'any');
    await until(async () => (await reads.getCheckpoint(checkpointName(counters))) === position);
    await old.stop();
    expect(await reads.get(collectionName(counters, 'counters'), 'm')).toMatchObject({ total: 15 });
    expect(await reads.get(collectionName(next, 'counters'), 'm')).toMatchObject({ total: 3 });

    const current = await startProjections(events, active, [next], () => undefined);
    await until(async () => (await reads.getCheckpoint(checkpointName(next))) === position);
    await current.stop();
    expect(await active.get(collectionName(counters, 'counters'), 'm')).toMatchObject({ total: 15 });
  });

  it('answers that the write is stored when the read side does not catch up in time, and says writes must wait until it has', async () => {
    readYourWrites.track(['stalled']);
    readYourWrites.timeoutMs = 30;
    expect(() => readYourWrites.assertKeepingUp()).not.toThrow();
    const late = await repository.handle(counter, 'counter-f', { type: 'increment', id: 'f', by: 1 }).catch((error: unknown) => error);
    expect(late).toBeInstanceOf(WriteStoredNotYetVisible);
    expect(late).toMatchObject({ code: 'unavailable', details: { writeStored: true } });
    const [stored] = await events.readStream('counter-f');
    expect(stored).toBeDefined();

    // The gateway's write gate asks this before every write request (WriteGate).
    expect(() => readYourWrites.assertKeepingUp()).toThrow(Unavailable);
    expect(() => readYourWrites.assertKeepingUp()).toThrow('nothing was written');
    readYourWrites.report('stalled', stored.position - 1);
    expect(() => readYourWrites.assertKeepingUp()).toThrow('nothing was written');
    readYourWrites.report('stalled', stored.position);
    expect(() => readYourWrites.assertKeepingUp()).not.toThrow();
  });

  it('says writes must wait while one has been waiting for the read side longer than it allows, and the write that waits still completes', async () => {
    readYourWrites.track(['slow']);
    readYourWrites.refuseWritesAfterMs = 20;
    const waiting = repository.handle(counter, 'counter-h', { type: 'increment', id: 'h', by: 1 });
    await until(async () => (await events.readStream('counter-h')).length === 1);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(() => readYourWrites.assertKeepingUp()).toThrow('nothing was written');
    readYourWrites.report('slow', Number.MAX_SAFE_INTEGER);
    await expect(waiting).resolves.toMatchObject({ state: { total: 1 } });
    expect(() => readYourWrites.assertKeepingUp()).not.toThrow();
  });
});
