import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadStore } from '@lib/read-store';
import { describeReadStoreContract } from '@lib/read-store/testing/read-store.contract';
import { ActiveProjectionReadStore, PROJECTION_POINTERS, type ProjectionPointer } from './active-projections';

// Names no pointer maps go to the engine as they are: the wrapper is a ReadStore like any other.
describeReadStoreContract('ActiveProjectionReadStore over SqliteReadStore', async () => {
  const store = new ActiveProjectionReadStore(new SqliteReadStore({ file: ':memory:' }));
  return { store, cleanup: () => store.close() };
});

describe('ActiveProjectionReadStore', () => {
  const pointer: ProjectionPointer = { id: 'things@v3', name: 'things', version: 3, generation: 2, collections: ['things'], switchedAt: 0 };

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
