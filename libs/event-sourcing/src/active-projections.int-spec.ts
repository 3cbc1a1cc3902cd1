import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadStore } from '@lib/read-store';
import { describeReadStoreContract } from '@lib/read-store/testing/read-store.contract';
import { ActiveProjectionReadStore, MAX_HOLD_MS, PROJECTION_POINTERS, readsSeeProgressOf, type ProjectionPointer } from './active-projections';
import { atGeneration, type Projection } from './projection';

// Names no pointer maps go to the engine as they are: the wrapper is a ReadStore like any other.
describeReadStoreContract('ActiveProjectionReadStore over SqliteReadStore', async () => {
  const store = new ActiveProjectionReadStore(new SqliteReadStore({ file: ':memory:' }));
  return { store, cleanup: () => store.close() };
});

describe('ActiveProjectionReadStore', () => {
  const pointer: ProjectionPointer = { id: 'things@v3', name: 'things', version: 3, generation: 2, collections: ['things'], switchedAt: 0 };
  const projection = { name: 'things', version: 3, collections: { things: [] } } as unknown as Projection;

  it('serves every read and write of a generation-0 name from the generation its pointer names', async () => {
    const engine = new SqliteReadStore({ file: ':memory:' });
    const store = new ActiveProjectionReadStore(engine, 0);
    await engine.upsert([{ collection: 'things_v3', document: { id: 'old', n: 0 } }]);
    await engine.upsert([{ collection: 'things_v3_g2', document: { id: 'a', n: 1 } }]);
    expect(await store.get('things_v3', 'old')).toEqual({ id: 'old', n: 0 });

    await engine.upsert([{ collection: PROJECTION_POINTERS, document: pointer }]);
    expect(await store.get('things_v3', 'old')).toBeNull();
    expect(await store.get('things_v3', 'a')).toEqual({ id: 'a', n: 1 });
    await store.upsert([{ collection: 'things_v3', document: { id: 'b', n: 2 } }]);
    expect(await engine.get('things_v3_g2', 'b')).toEqual({ id: 'b', n: 2 });
    expect(await store.count('things_v3')).toBe(2);
    expect((await store.find('things_v3', { sort: [{ field: 'id', direction: 'asc' }], limit: 10 })).items.map((d) => d.id)).toEqual(['a', 'b']);
    expect((await store.findJson('things_v3', 'n', { sort: [{ field: 'id', direction: 'asc' }], limit: 10 })).items).toEqual(['1', '2']);
    await store.delete('things_v3', 'a');
    expect(await engine.get('things_v3_g2', 'a')).toBeNull();
    // Another version's names are not touched by this version's pointer.
    expect(await store.get('things_v2', 'a')).toBeNull();
    await store.close();
  });

  it('trusts the pointers it read for refreshMs: a switch reaches it within that time', async () => {
    const engine = new SqliteReadStore({ file: ':memory:' });
    const store = new ActiveProjectionReadStore(engine, 1_000);
    await engine.upsert([{ collection: 'things_v3', document: { id: 'x', generation: 0 } }, { collection: 'things_v3_g2', document: { id: 'x', generation: 2 } }]);
    expect(await store.get('things_v3', 'x')).toMatchObject({ generation: 0 });
    await engine.upsert([{ collection: PROJECTION_POINTERS, document: pointer }]);
    expect(await store.get('things_v3', 'x')).toMatchObject({ generation: 0 });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await store.get('things_v3', 'x')).toMatchObject({ generation: 2 });
    await store.close();
  });

  describe('after a switch, with the writes this process confirmed', () => {
    const switched = (generation: number): ProjectionPointer => ({ ...pointer, generation });
    let engine: SqliteReadStore;
    let store: ActiveProjectionReadStore;
    let confirmed: number;
    /** A projector applying the write at `position` to a generation, as one transaction with its checkpoint. */
    const apply = (generation: number, position: number, notes: string) =>
      engine.upsert([{ collection: generation ? `things_v3_g${generation}` : 'things_v3', document: { id: 'q', notes } }], { name: generation ? `projection:things:v3:g${generation}` : 'projection:things:v3', position });

    beforeEach(async () => {
      engine = new SqliteReadStore({ file: ':memory:' });
      store = new ActiveProjectionReadStore(engine, 1_000);
      store.followConfirmedWrites(() => confirmed);
      await apply(0, 10, 'ten');
      confirmed = 10;
      expect(await store.get('things_v3', 'q')).toMatchObject({ notes: 'ten' });
    });
    afterEach(() => store.close());

    it('keeps serving the old generation while the new one lacks a confirmed write, and follows once it has it', async () => {
      await apply(1, 10, 'ten');
      await engine.upsert([{ collection: PROJECTION_POINTERS, document: switched(1) }]);
      // The projector, still on the old generation, applies and confirms a write.
      await apply(0, 11, 'eleven');
      confirmed = 11;
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      expect(await store.get('things_v3', 'q')).toMatchObject({ notes: 'eleven' });
      expect(store.servedGeneration(pointer)).toBe(0);
      expect((await store.activePointers()).get(pointer.id)?.generation).toBe(1);

      // The new generation gets it (the projector followed, or the rebuild applied it): the next read follows at once.
      await apply(1, 12, 'twelve');
      confirmed = 12;
      expect(await store.get('things_v3', 'q')).toMatchObject({ notes: 'twelve' });
      expect(store.servedGeneration(pointer)).toBe(1);
      expect(readsSeeProgressOf(store, atGeneration(projection, 0))).toBe(false);
      expect(readsSeeProgressOf(store, atGeneration(projection, 1))).toBe(true);
    });

    it('decides again when a write is confirmed on the old generation while it decides to follow: the read has that write', async () => {
      await apply(1, 11, 'eleven');
      await engine.upsert([{ collection: PROJECTION_POINTERS, document: switched(1) }]);
      await apply(0, 11, 'eleven');
      confirmed = 11;
      // a round trip for each checkpoint, as on MongoDB
      const getCheckpoint = engine.getCheckpoint.bind(engine);
      engine.getCheckpoint = async (name: string) => {
        const position = await getCheckpoint(name);
        await new Promise((resolve) => setTimeout(resolve, 30));
        return position;
      };
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      const other = store.get('things_v3', 'q'); // another request looks at the pointers: both generations at 11
      await new Promise((resolve) => setTimeout(resolve, 5));
      // the projector, still on the old generation that reads are served from, applies and confirms 12
      expect(readsSeeProgressOf(store, atGeneration(projection, 0))).toBe(true);
      await apply(0, 12, 'twelve');
      confirmed = 12;
      await other;
      expect(await store.get('things_v3', 'q')).toMatchObject({ notes: 'twelve' });
    });

    it('a read after a write confirmed on the new generation does not take the answer of a look begun before it', async () => {
      await apply(1, 10, 'ten');
      await engine.upsert([{ collection: PROJECTION_POINTERS, document: switched(1) }]);
      await apply(0, 11, 'eleven');
      confirmed = 11;
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      expect(await store.get('things_v3', 'q')).toMatchObject({ notes: 'eleven' }); // held on the old generation
      const listCollections = engine.listCollections.bind(engine);
      engine.listCollections = async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return listCollections();
      };
      await new Promise((resolve) => setTimeout(resolve, 25));
      const other = store.get('things_v3', 'q'); // the periodic look, deciding to hold with 11 confirmed
      await new Promise((resolve) => setTimeout(resolve, 5));
      // the projector followed the switch and applies 12 to the new generation; the write is confirmed
      await apply(1, 12, 'twelve');
      confirmed = 12;
      const mine = await store.get('things_v3', 'q');
      await other;
      expect(mine).toMatchObject({ notes: 'twelve' });
    });

    it('follows a new generation that is behind at once when the old one was dropped (a rebuild with a short grace period)', async () => {
      await engine.upsert([{ collection: PROJECTION_POINTERS, document: switched(1) }]);
      confirmed = 11;
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      await store.get('things_v3', 'q');
      expect(store.servedGeneration(pointer)).toBe(0);
      await engine.dropCollection('things_v3');
      await new Promise((resolve) => setTimeout(resolve, 30));
      await store.get('things_v3', 'q');
      expect(store.servedGeneration(pointer)).toBe(1);
    });

    it('follows a new generation that stays behind after MAX_HOLD_MS, before a rebuild drops the old one', async () => {
      await engine.upsert([{ collection: PROJECTION_POINTERS, document: switched(1) }]);
      confirmed = 11;
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      expect(store.servedGeneration(pointer)).toBe(0);
      await store.get('things_v3', 'q');
      // Node's timers may fire up to a millisecond before performance.now() says they are due.
      await new Promise((resolve) => setTimeout(resolve, MAX_HOLD_MS + 50));
      await store.get('things_v3', 'q');
      expect(store.servedGeneration(pointer)).toBe(1);
    });
  });

  describe('change tokens', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'active-projections-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    // refreshMs 0: the pointers are always due for a refresh, so only their own token vouches for them.
    it('gives a token however long ago the pointers were read, while nothing was written to them', async () => {
      const engine = new SqliteReadStore({ file: join(dir, 'read.db') });
      const store = new ActiveProjectionReadStore(engine, 0);
      expect(store.changeToken('things_v3')).toBeNull();
      await store.get('things_v3', 'x');
      const token = store.changeToken('things_v3');
      expect(token).toBe(`things_v3:${engine.changeToken('things_v3')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(store.changeToken('things_v3')).toBe(token);

      await store.upsert([{ collection: 'things_v3', document: { id: 'x' } }]);
      const written = store.changeToken('things_v3');
      expect(written).not.toBeNull();
      expect(written).not.toBe(token);
      await store.close();
    });

    it('gives none once a switch is written, by this process or another, until the pointers are read again', async () => {
      const file = join(dir, 'read.db');
      const engine = new SqliteReadStore({ file });
      const store = new ActiveProjectionReadStore(engine, 0);
      await store.get('things_v3', 'x');
      expect(store.changeToken('things_v3')).not.toBeNull();

      await engine.upsert([{ collection: PROJECTION_POINTERS, document: pointer }]);
      expect(store.changeToken('things_v3')).toBeNull();
      await store.get('things_v3', 'x');
      expect(store.changeToken('things_v3')).toMatch(/^things_v3_g2:/);

      const rebuild = new SqliteReadStore({ file });
      await rebuild.upsert([{ collection: PROJECTION_POINTERS, document: { ...pointer, generation: 3 } }]);
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(store.changeToken('things_v3')).toBeNull();
      await store.get('things_v3', 'x');
      expect(store.changeToken('things_v3')).toMatch(/^things_v3_g3:/);
      await rebuild.close();
      await store.close();
    });

    it('gives one within refreshMs of reading the pointers, the delay a switch may take to reach a reader', async () => {
      const engine = new SqliteReadStore({ file: join(dir, 'read.db') });
      const store = new ActiveProjectionReadStore(engine, 60_000);
      await store.get('things_v3', 'x');
      await engine.upsert([{ collection: PROJECTION_POINTERS, document: pointer }]);
      expect(store.changeToken('things_v3')).toMatch(/^things_v3:/);
      await store.close();
    });
  });
});
