import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeReadStoreContract } from '@lib/read-store/testing/read-store.contract';
import { SqliteReadStore, WalIndexHeader } from './sqlite-read-store';

describeReadStoreContract('SqliteReadStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'read-store-'));
  const store = new SqliteReadStore({ file: join(dir, 'read.db') });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SqliteReadStore on a file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'read-store-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("a bulk write refused in the writer's thread leaves none of its documents, tables or checkpoints, and the next write applies", async () => {
    const store = new SqliteReadStore({ file: join(dir, 'read.db') });
    const writer = store.openBulkWriter();
    try {
      expect(writer.atomic).toBe(true);
      await store.ensureIndexes('keys_v1', [{ fields: [{ field: 'k', direction: 'asc' }], unique: true }]);
      const refused = writer.write(
        [
          { collection: 'fresh_v1', document: { id: 'x' } },
          { collection: 'keys_v1', document: { id: 'a', k: 1 } },
          { collection: 'keys_v1', document: { id: 'b', k: 1 } },
        ],
        [{ name: 'p', position: 3 }],
      );
      await expect(refused).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
      expect(await store.listCollections()).toEqual(['keys_v1']);
      expect(await store.count('keys_v1')).toBe(0);
      expect(await store.getCheckpoint('p')).toBeNull();
      // The table the refused write created was rolled back with it, and is created again.
      expect(await writer.write([{ collection: 'fresh_v1', document: { id: 'x' } }], [{ name: 'p', position: 4 }])).toBe(1);
      expect(await store.get('fresh_v1', 'x')).toEqual({ id: 'x' });
      expect(await store.getCheckpoint('p')).toBe(4);
    } finally {
      await writer.close();
      await store.close();
    }
  });

  it('sees in findJson and in change tokens what another connection commits', async () => {
    const file = join(dir, 'read.db');
    const gateway = new SqliteReadStore({ file });
    const projector = new SqliteReadStore({ file });
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    const options = { sort: [{ field: 'n', direction: 'asc' as const }, { field: 'id', direction: 'asc' as const }], limit: 10 };
    try {
      await projector.upsert([{ collection: 'quotes_v1', document: { id: 'a', n: 1, item: 'first' } }]);
      await nextTurn();
      const before = gateway.changeToken('quotes_v1');
      expect((await gateway.findJson('quotes_v1', 'item', options)).items).toEqual(['"first"']);
      await projector.upsert([{ collection: 'quotes_v1', document: { id: 'a', n: 1, item: 'second' } }]);
      await nextTurn();
      expect(gateway.changeToken('quotes_v1')).not.toBe(before);
      expect((await gateway.findJson('quotes_v1', 'item', options)).items).toEqual(['"second"']);
    } finally {
      await gateway.close();
      await projector.close();
    }
  });

  it('gives a new token in the first callback after another connection committed, even one that runs before the next turn', async () => {
    const file = join(dir, 'read.db');
    const gateway = new SqliteReadStore({ file });
    const projector = new SqliteReadStore({ file });
    try {
      await projector.upsert([{ collection: 'quotes_v1', document: { id: 'a', n: 1 } }]);
      // A token read in an immediate callback, then a commit by the other connection; a timer
      // runs before the next round of immediates.
      const [before, after] = await new Promise<[string, string]>((resolve) =>
        setImmediate(() => {
          const first = gateway.changeToken('quotes_v1');
          void projector.upsert([{ collection: 'quotes_v1', document: { id: 'a', n: 2 } }]);
          setTimeout(() => resolve([first, gateway.changeToken('quotes_v1')]), 0);
          // Due before this callback returns, the timer runs in the next turn's timer phase.
          const due = Date.now() + 5;
          while (Date.now() < due);
        }),
      );
      expect(after).not.toBe(before);
    } finally {
      await gateway.close();
      await projector.close();
    }
  });

  it("reads a WAL-index header that stays the same until a connection commits, its own or another's", async () => {
    const file = join(dir, 'read.db');
    const gateway = new SqliteReadStore({ file });
    const projector = new SqliteReadStore({ file });
    const header = WalIndexHeader.open(`${file}-shm`)!;
    const read = () => Buffer.from(header.read()!);
    try {
      const before = read();
      await gateway.get('quotes_v1', 'a');
      await gateway.findJson('quotes_v1', 'item', { sort: [{ field: 'id', direction: 'asc' }], limit: 5 });
      expect(read()).toEqual(before);
      expect(header.matches(before)).toBe(true);
      await projector.upsert([{ collection: 'quotes_v1', document: { id: 'a', n: 1 } }]);
      const afterOther = read();
      expect(afterOther).not.toEqual(before);
      expect(header.matches(before)).toBe(false);
      expect(header.matches(afterOther)).toBe(true);
      await gateway.upsert([{ collection: 'sessions_v1', document: { id: 's', n: 1 } }]);
      expect(read()).not.toEqual(afterOther);
      expect(header.matches(afterOther)).toBe(false);
    } finally {
      header.close();
      await gateway.close();
      await projector.close();
    }
  });

  it('gives a new token after each of many commits by another connection, checked between them', async () => {
    const file = join(dir, 'read.db');
    const gateway = new SqliteReadStore({ file });
    const projector = new SqliteReadStore({ file });
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    try {
      await projector.upsert([{ collection: 'quotes_v1', document: { id: 'a', n: 0 } }]);
      await nextTurn();
      const tokens = new Set([gateway.changeToken('quotes_v1')]);
      for (let n = 1; n <= 50; n++) {
        // Other collections too: every commit of the file changes the token's data_version part.
        await projector.upsert([{ collection: n % 2 ? 'quotes_v1' : 'contacts_v1', document: { id: 'a', n } }]);
        await nextTurn();
        const token = gateway.changeToken('quotes_v1');
        expect(tokens.has(token)).toBe(false);
        tokens.add(token);
        await nextTurn();
        expect(gateway.changeToken('quotes_v1')).toBe(token);
      }
    } finally {
      await gateway.close();
      await projector.close();
    }
  });

  it('cannot read the header of a database that has none', () => {
    expect(WalIndexHeader.open(join(dir, 'missing.db-shm'))).toBeNull();
  });

  it('keeps documents, indexes and checkpoints when closed and reopened', async () => {
    const file = join(dir, 'nested', 'read.db');
    const first = new SqliteReadStore({ file });
    await first.ensureIndexes('quotes_v1', [{ fields: [{ field: 'reference', direction: 'asc' }], unique: true }]);
    await first.upsert([{ collection: 'quotes_v1', document: { id: 'q1', reference: 'Q-1' }, guard: { field: 'position', value: 7 } }]);
    await first.saveCheckpoint('quotes_v1', 7);
    await first.close();

    const reopened = new SqliteReadStore({ file });
    expect(await reopened.get('quotes_v1', 'q1')).toEqual({ id: 'q1', reference: 'Q-1', position: 7 });
    expect(await reopened.getCheckpoint('quotes_v1')).toBe(7);
    expect(await reopened.listCollections()).toEqual(['quotes_v1']);
    const duplicate = reopened.upsert([{ collection: 'quotes_v1', document: { id: 'q2', reference: 'Q-1' } }]);
    expect(await duplicate.then(() => 'applied', () => 'refused')).toBe('refused');
    await reopened.close();
  });

  it('commits a projection step and its checkpoint together, or neither', async () => {
    const store = new SqliteReadStore({ file: join(dir, 'read.db') });
    store.transaction((tx) => {
      tx.upsert([{ collection: 'quotes_v1', document: { id: 'q1', status: 'draft' }, guard: { field: 'position', value: 1 } }]);
      tx.saveCheckpoint('quotes_v1', 1);
    });

    expect(() =>
      store.transaction((tx) => {
        tx.upsert([{ collection: 'quotes_v1', document: { id: 'q1', status: 'sent' }, guard: { field: 'position', value: 2 } }]);
        tx.upsert([{ collection: 'leads_v1', document: { id: 'l1' } }]);
        tx.saveCheckpoint('quotes_v1', 2);
        throw new Error('projection failed half-way');
      }),
    ).toThrow('projection failed half-way');

    expect(await store.get('quotes_v1', 'q1')).toMatchObject({ status: 'draft' });
    expect(await store.getCheckpoint('quotes_v1')).toBe(1);
    expect(await store.listCollections()).toEqual(['quotes_v1']);
    expect(await store.get('leads_v1', 'l1')).toBeNull();
    await store.close();
  });

  it('sees collections another connection to the same file creates and drops', async () => {
    const file = join(dir, 'read.db');
    const writer = new SqliteReadStore({ file });
    const reader = new SqliteReadStore({ file });
    expect(await reader.get('quotes_v1', 'q1')).toBeNull();

    await writer.upsert([{ collection: 'quotes_v1', document: { id: 'q1' } }]);
    expect(await reader.get('quotes_v1', 'q1')).toEqual({ id: 'q1' });

    await writer.dropCollection('quotes_v1');
    expect(await reader.get('quotes_v1', 'q1')).toBeNull();
    expect(await reader.count('quotes_v1')).toBe(0);
    await Promise.all([writer.close(), reader.close()]);
  });
});
