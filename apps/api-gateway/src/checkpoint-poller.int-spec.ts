import { checkpointName, PROJECTION_POINTERS, ReadYourWrites, type Projection } from '@lib/event-sourcing';
import { SqliteReadStore } from '@lib/read-store';
import { ProjectionRegistry } from '@lib/runtime';
import { CheckpointPoller, IDLE_CHECKPOINT_POLL_MS } from './checkpoint-poller';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('CheckpointPoller (the projector in another process)', () => {
  const projections = ['quotes', 'sessions'].map((name) => ({ name, version: 1, collections: { [name]: [] }, handle: async () => undefined }) as unknown as Projection);
  let reads: SqliteReadStore;
  let readYourWrites: ReadYourWrites;
  let poller: CheckpointPoller;
  let checkpointReads: number;
  let pointerReads: number;
  /** when the poller started (performance.now()) */
  let startedAt: number;

  beforeEach(() => {
    reads = new SqliteReadStore({ file: ':memory:' });
    const getCheckpoint = reads.getCheckpoint.bind(reads);
    checkpointReads = 0;
    reads.getCheckpoint = (name: string) => {
      checkpointReads++;
      return getCheckpoint(name);
    };
    // A read of the checkpoints starts with the pointers (the live generations), in the same turn.
    const find = reads.find.bind(reads);
    pointerReads = 0;
    reads.find = ((collection: string, options: Parameters<SqliteReadStore['find']>[1]) => {
      if (collection === PROJECTION_POINTERS) pointerReads++;
      return find(collection, options);
    }) as SqliteReadStore['find'];
    const registry = new ProjectionRegistry();
    registry.register(...projections);
    readYourWrites = new ReadYourWrites();
    poller = new CheckpointPoller(registry, reads, readYourWrites);
    startedAt = performance.now();
    poller.onApplicationBootstrap();
  });
  afterEach(async () => {
    await poller.onApplicationShutdown();
    await reads.close();
  });

  /** What the projector in the other process stores: each projection's checkpoint at `position`. */
  const projectorReaches = (position: number) => reads.saveCheckpoints(projections.map((projection) => ({ name: checkpointName(projection), position })));

  it('reads the checkpoints seldom while no write waits, and still learns the progress', async () => {
    await projectorReaches(7);
    await pause(IDLE_CHECKPOINT_POLL_MS + 300);
    // One read per projection a second (at start, and once for each second passed: a late timer makes more seconds), not one every 20 ms.
    const seconds = Math.floor((performance.now() - startedAt) / IDLE_CHECKPOINT_POLL_MS);
    expect(checkpointReads).toBeLessThanOrEqual((1 + seconds) * projections.length);
    expect(readYourWrites.minimum()).toBe(7);
  });

  it('reads them at once when a write starts waiting, and often while it waits', async () => {
    await pause(50); // the first read, at start
    const before = checkpointReads;
    const pointersBefore = pointerReads;
    const waiting = readYourWrites.waitFor(12);
    // At once: the read starts with the wait, before any timer could fire (its pointers first, then the checkpoints).
    expect(pointerReads).toBe(pointersBefore + 1);
    // Read again and again while the write waits (every 20 ms; seldom would be once a second): three times well within the second.
    const waitedFrom = performance.now();
    while (checkpointReads < before + 3 * projections.length && performance.now() - waitedFrom < IDLE_CHECKPOINT_POLL_MS * 0.9) await pause(20);
    expect(checkpointReads).toBeGreaterThanOrEqual(before + 3 * projections.length);
    await projectorReaches(12);
    await waiting;
    expect(readYourWrites.minimum()).toBe(12);
    expect(readYourWrites.progressWanted()).toBe(false);
  });
});
