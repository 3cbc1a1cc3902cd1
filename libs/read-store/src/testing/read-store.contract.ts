import { randomUUID } from 'node:crypto';
import { FindOptions, ReadDocument, ReadStore, SortKey } from '../read-store.port';

/**
 * The behaviour every ReadStore adapter must share. Each test uses its own collections (a random
 * suffix), so the suite can run against a shared server.
 */
export function describeReadStoreContract(
  name: string,
  factory: () => Promise<{ store: ReadStore; cleanup: () => Promise<void> }>,
): void {
  describe(`ReadStore contract: ${name}`, () => {
    let store: ReadStore;
    let cleanup: () => Promise<void>;
    const created: string[] = [];

    beforeAll(async () => {
      ({ store, cleanup } = await factory());
    });
    afterEach(async () => {
      await Promise.all(created.splice(0).map((collection) => store.dropCollection(collection)));
    });
    afterAll(async () => {
      await cleanup();
    });

    const newCollection = (): string => {
      const collection = `t_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      created.push(collection);
      return collection;
    };
    const newName = (): string => `checkpoint-${randomUUID()}`;
    const ids = (items: ReadDocument[]): string[] => items.map((item) => item.id);

    describe('documents', () => {
      it('reads back an upserted document, nested fields included, and a missing one as null', async () => {
        const quotes = newCollection();
        const quote = { id: 'q1', status: 'draft', total: 120.5, customer: { name: 'Ada', vip: true }, lines: [1, 2] };

        expect(await store.upsert([{ collection: quotes, document: quote }])).toBe(1);

        expect(await store.get(quotes, 'q1')).toEqual(quote);
        expect(await store.get(quotes, 'q2')).toBeNull();
        expect(await store.get(newCollection(), 'q1')).toBeNull();
      });

      it('replaces the whole document on a second upsert', async () => {
        const quotes = newCollection();
        await store.upsert([{ collection: quotes, document: { id: 'q1', status: 'draft', note: 'x' } }]);
        await store.upsert([{ collection: quotes, document: { id: 'q1', status: 'sent' } }]);
        expect(await store.get(quotes, 'q1')).toEqual({ id: 'q1', status: 'sent' });
      });

      it('deletes a document; deleting a missing one is harmless', async () => {
        const quotes = newCollection();
        await store.upsert([{ collection: quotes, document: { id: 'q1' } }, { collection: quotes, document: { id: 'q2' } }]);
        await store.delete(quotes, 'q1');
        await store.delete(quotes, 'q1');
        await store.delete(newCollection(), 'q1');
        expect(await store.get(quotes, 'q1')).toBeNull();
        expect(await store.count(quotes)).toBe(1);
      });

      it('drops a collection and lists the ones that exist', async () => {
        const kept = newCollection();
        const dropped = newCollection();
        await store.upsert([{ collection: kept, document: { id: 'a' } }, { collection: dropped, document: { id: 'b' } }]);
        expect(await store.listCollections()).toEqual(expect.arrayContaining([kept, dropped]));

        await store.dropCollection(dropped);

        const collections = await store.listCollections();
        expect(collections).toContain(kept);
        expect(collections).not.toContain(dropped);
        expect(await store.get(dropped, 'b')).toBeNull();
        expect(await store.count(dropped)).toBe(0);
      });

      it('refuses a collection name that is not lower-case letters, digits and _', async () => {
        await expect(store.upsert([{ collection: 'Quotes-v1', document: { id: 'a' } }])).rejects.toThrow();
        await expect(store.get('1quotes', 'a')).rejects.toThrow();
      });
    });

    describe('guarded upserts', () => {
      it('applies a write only when the stored guard is missing or lower, and records the guard value', async () => {
        const quotes = newCollection();
        const write = (status: string, version: number) => ({
          collection: quotes,
          document: { id: 'q1', status },
          guard: { field: 'version', value: version },
        });

        expect(await store.upsert([write('draft', 1)])).toBe(1);
        expect(await store.get(quotes, 'q1')).toEqual({ id: 'q1', status: 'draft', version: 1 });
        expect(await store.upsert([write('sent', 3)])).toBe(1);
        expect(await store.upsert([write('stale', 2)])).toBe(0);
        expect(await store.upsert([write('replayed', 3)])).toBe(0);
        expect(await store.get(quotes, 'q1')).toEqual({ id: 'q1', status: 'sent', version: 3 });
      });

      it('applies to a stored document that lacks the guard field', async () => {
        const quotes = newCollection();
        await store.upsert([{ collection: quotes, document: { id: 'q1', status: 'imported' } }]);
        expect(await store.upsert([{ collection: quotes, document: { id: 'q1', status: 'draft' }, guard: { field: 'version', value: 1 } }])).toBe(1);
        expect(await store.get(quotes, 'q1')).toMatchObject({ status: 'draft' });
      });

      it('a replay of the same writes changes nothing and reports none applied', async () => {
        const quotes = newCollection();
        const totals = newCollection();
        const history = [
          { collection: quotes, document: { id: 'q1', status: 'draft' }, guard: { field: 'position', value: 10 } },
          { collection: totals, document: { id: 'org-1', quotes: 1 }, guard: { field: 'position', value: 10 } },
          { collection: quotes, document: { id: 'q1', status: 'sent' }, guard: { field: 'position', value: 12 } },
          { collection: quotes, document: { id: 'q2', status: 'draft' }, guard: { field: 'position', value: 13 } },
          { collection: totals, document: { id: 'org-1', quotes: 2 }, guard: { field: 'position', value: 13 } },
        ];

        expect(await store.upsert(history)).toBe(5);
        expect(await store.upsert(history)).toBe(0);
        expect(await store.upsert(history.slice(0, 2))).toBe(0);

        expect(await store.get(quotes, 'q1')).toEqual({ id: 'q1', status: 'sent', position: 12 });
        expect(await store.get(totals, 'org-1')).toEqual({ id: 'org-1', quotes: 2, position: 13 });
      });

      it('guards on a nested field', async () => {
        const quotes = newCollection();
        const write = (status: string, revision: number) => ({
          collection: quotes,
          document: { id: 'q1', status, meta: { source: 'projection' } },
          guard: { field: 'meta.revision', value: revision },
        });
        expect(await store.upsert([write('draft', 1), write('sent', 2), write('stale', 1)])).toBe(2);
        expect(await store.get(quotes, 'q1')).toEqual({ id: 'q1', status: 'sent', meta: { source: 'projection', revision: 2 } });
      });
    });

    describe('find and count', () => {
      const catalogue = [
        { id: 'a', status: 'draft', total: 100, currency: 'EUR', archived: false, customer: { tier: 'gold' }, expiresAt: null },
        { id: 'b', status: 'sent', total: 250, currency: 'EUR', archived: false, customer: { tier: 'silver' } },
        { id: 'c', status: 'sent', total: 80, currency: 'USD', archived: true, customer: { tier: 'gold' }, expiresAt: 5 },
        { id: 'd', status: 'accepted', total: 250, currency: 'GBP', archived: false, customer: {} },
        { id: 'e', status: 'draft', total: 40.5, currency: 'EUR', archived: true, expiresAt: 9 },
      ];
      const seed = async (): Promise<string> => {
        const quotes = newCollection();
        await store.ensureIndexes(quotes, [{ fields: [{ field: 'status', direction: 'asc' }, { field: 'total', direction: 'desc' }] }]);
        await store.upsert(catalogue.map((document) => ({ collection: quotes, document })));
        return quotes;
      };
      const matching = async (quotes: string, filter: FindOptions['filter']): Promise<string[]> => {
        const { items } = await store.find(quotes, { filter, sort: [{ field: 'id', direction: 'asc' }], limit: 100 });
        expect(await store.count(quotes, filter)).toBe(items.length);
        return ids(items);
      };

      it('filters by equality on strings, numbers, booleans, dotted paths and id', async () => {
        const quotes = await seed();
        expect(await matching(quotes, { status: 'sent' })).toEqual(['b', 'c']);
        expect(await matching(quotes, { total: 250 })).toEqual(['b', 'd']);
        expect(await matching(quotes, { archived: true })).toEqual(['c', 'e']);
        expect(await matching(quotes, { archived: false, currency: 'EUR' })).toEqual(['a', 'b']);
        expect(await matching(quotes, { 'customer.tier': 'gold' })).toEqual(['a', 'c']);
        expect(await matching(quotes, { id: 'd' })).toEqual(['d']);
        expect(await matching(quotes, { status: 'missing' })).toEqual([]);
      });

      it('null matches a field that is null or missing', async () => {
        const quotes = await seed();
        expect(await matching(quotes, { expiresAt: null })).toEqual(['a', 'b', 'd']);
        expect(await matching(quotes, { 'customer.tier': null })).toEqual(['d', 'e']);
      });

      it('filters by in and by ranges, alone and combined', async () => {
        const quotes = await seed();
        expect(await matching(quotes, { status: { in: ['draft', 'accepted'] } })).toEqual(['a', 'd', 'e']);
        expect(await matching(quotes, { id: { in: ['b', 'e', 'zz'] } })).toEqual(['b', 'e']);
        expect(await matching(quotes, { status: { in: [] } })).toEqual([]);
        expect(await matching(quotes, { total: { gt: 80 } })).toEqual(['a', 'b', 'd']);
        expect(await matching(quotes, { total: { gte: 80 } })).toEqual(['a', 'b', 'c', 'd']);
        expect(await matching(quotes, { total: { lt: 100 } })).toEqual(['c', 'e']);
        expect(await matching(quotes, { total: { lte: 100 } })).toEqual(['a', 'c', 'e']);
        expect(await matching(quotes, { total: { gt: 50, lte: 250 }, status: 'sent' })).toEqual(['b', 'c']);
        expect(await matching(quotes, { expiresAt: { gte: 0 } })).toEqual(['c', 'e']);
        expect(await matching(quotes, { currency: { gte: 'EUR', lt: 'USD' } })).toEqual(['a', 'b', 'd', 'e']);
      });

      it('counts a whole collection, and a missing one as zero', async () => {
        const quotes = await seed();
        expect(await store.count(quotes)).toBe(5);
        expect(await store.count(newCollection())).toBe(0);
      });

      it('finds nothing in a missing collection', async () => {
        expect(await store.find(newCollection(), { sort: [{ field: 'id', direction: 'asc' }], limit: 10 })).toEqual({
          items: [],
          nextAfter: null,
        });
      });

      it('nextAfter holds the last sort values only while more documents follow', async () => {
        const quotes = await seed();
        const sort: SortKey[] = [{ field: 'total', direction: 'desc' }, { field: 'id', direction: 'asc' }];

        const first = await store.find(quotes, { sort, limit: 2 });
        expect(ids(first.items)).toEqual(['b', 'd']);
        expect(first.nextAfter).toEqual([250, 'd']);

        const second = await store.find(quotes, { sort, limit: 3, after: first.nextAfter! });
        expect(ids(second.items)).toEqual(['a', 'c', 'e']);
        expect(second.nextAfter).toBeNull();
      });
    });

    describe('findJson', () => {
      const views = [
        { id: 'a', organizationId: 'o1', createdAt: 3, view: { id: 'a', total: 40.5, note: 'He said "ok" – 5 €\n', tags: ['x'], sentAt: null } },
        { id: 'b', organizationId: 'o1', createdAt: 1, view: { id: 'b', total: 1e21, nested: { deep: [1, { two: true }] } } },
        { id: 'c', organizationId: 'o2', createdAt: 2, view: { id: 'c' } },
        { id: 'd', organizationId: 'o1', createdAt: 3, view: 'plain text' },
        { id: 'e', organizationId: 'o1', createdAt: 2 },
      ];
      const sort: SortKey[] = [{ field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }];
      const seed = async (): Promise<string> => {
        const collection = newCollection();
        await store.ensureIndexes(collection, [
          { fields: [{ field: 'organizationId', direction: 'asc' }, ...sort], include: ['view'] },
        ]);
        await store.upsert(views.map((document) => ({ collection, document })));
        return collection;
      };

      it('returns the JSON text of a field of each found document, null when it is missing, in find order', async () => {
        const collection = await seed();
        const options: FindOptions = { filter: { organizationId: 'o1' }, sort, limit: 10 };

        const { items, nextAfter } = await store.findJson(collection, 'view', options);

        const found = await store.find(collection, options);
        expect(items).toEqual(found.items.map((document) => JSON.stringify(document.view ?? null)));
        expect(items.map((json) => JSON.parse(json))).toEqual([views[3].view, views[0].view, null, views[1].view]);
        expect(nextAfter).toBeNull();
      });

      it('pages with its own nextAfter like find', async () => {
        const collection = await seed();
        const first = await store.findJson(collection, 'view', { filter: { organizationId: 'o1' }, sort, limit: 3 });
        expect(first.items).toHaveLength(3);
        expect(first.nextAfter).not.toBeNull();

        const second = await store.findJson(collection, 'view', { filter: { organizationId: 'o1' }, sort, limit: 3, after: first.nextAfter! });
        expect(second.items).toEqual([JSON.stringify(views[1].view)]);
        expect(second.nextAfter).toBeNull();
        expect(await store.findJson(newCollection(), 'view', { sort, limit: 3 })).toEqual({ items: [], nextAfter: null });
      });

      it('sees a replaced document at once, whether or not an index includes the field', async () => {
        const collection = await seed();
        await store.upsert([{ collection, document: { ...views[2], view: { id: 'c', total: 7 } } }]);
        expect((await store.findJson(collection, 'view', { filter: { organizationId: 'o2' }, sort, limit: 1 })).items).toEqual(['{"id":"c","total":7}']);
        expect((await store.findJson(collection, 'view', { filter: { id: 'c' }, sort: [], limit: 1 })).items).toEqual(['{"id":"c","total":7}']);
      });
    });

    describe('change tokens', () => {
      it('gives a token that differs after every write to the collection, or none at all', async () => {
        const quotes = newCollection();
        const tokens = [store.changeToken(quotes)];
        await store.upsert([{ collection: quotes, document: { id: 'q1', n: 1 } }]);
        tokens.push(store.changeToken(quotes));
        await store.upsert([{ collection: quotes, document: { id: 'q1', n: 2 } }]);
        tokens.push(store.changeToken(quotes));
        await store.delete(quotes, 'q1');
        tokens.push(store.changeToken(quotes));
        if (tokens[0] === null) {
          // An engine without tokens must never give one: a token that does not change would hide writes.
          expect(tokens).toEqual([null, null, null, null]);
        } else {
          expect(new Set(tokens).size).toBe(tokens.length);
        }
      });

      it('answers findJson with every write made since the same page was last read', async () => {
        const quotes = newCollection();
        const options: FindOptions = { sort: [{ field: 'n', direction: 'asc' }, { field: 'id', direction: 'asc' }], limit: 10 };
        await store.upsert([{ collection: quotes, document: { id: 'a', n: 1, item: { v: 1 } } }]);
        expect((await store.findJson(quotes, 'item', options)).items).toEqual(['{"v":1}']);
        await store.upsert([{ collection: quotes, document: { id: 'a', n: 1, item: { v: 2 } } }, { collection: quotes, document: { id: 'b', n: 2, item: { v: 3 } } }]);
        expect((await store.findJson(quotes, 'item', options)).items).toEqual(['{"v":2}', '{"v":3}']);
        await store.delete(quotes, 'b');
        const page = await store.findJson(quotes, 'item', options);
        expect(page.items).toEqual(['{"v":2}']);
        page.items.push('changed by the caller');
        expect((await store.findJson(quotes, 'item', options)).items).toEqual(['{"v":2}']);
      });
    });

    describe('keyset paging', () => {
      /** 40 documents with many ties, and sort fields that are sometimes null or missing. */
      const documents: ReadDocument[] = Array.from({ length: 40 }, (_, i) => {
        const document: ReadDocument = { id: `doc-${String(i).padStart(2, '0')}`, score: (i * 7) % 5, name: ['ash', 'birch', 'cedar'][i % 3] };
        if (i % 4 !== 0) document.rank = i % 3;
        else if (i % 8 === 0) document.rank = null;
        document.meta = i % 5 === 0 ? {} : { group: `g${i % 2}` };
        document.flag = i % 2 === 0;
        return document;
      });
      const orders: SortKey[][] = [
        [{ field: 'rank', direction: 'asc' }, { field: 'id', direction: 'asc' }],
        [{ field: 'rank', direction: 'desc' }, { field: 'id', direction: 'asc' }],
        [{ field: 'rank', direction: 'asc' }, { field: 'score', direction: 'desc' }, { field: 'id', direction: 'desc' }],
        [{ field: 'meta.group', direction: 'desc' }, { field: 'name', direction: 'asc' }, { field: 'id', direction: 'desc' }],
        [{ field: 'flag', direction: 'desc' }, { field: 'score', direction: 'asc' }, { field: 'id', direction: 'asc' }],
        [{ field: 'id', direction: 'desc' }],
      ];

      it.each(orders.map((sort) => [sort.map((k) => `${k.field} ${k.direction}`).join(', '), sort] as const))(
        'pages through every document exactly once in order: %s',
        async (_label, sort) => {
          const collection = newCollection();
          await store.ensureIndexes(collection, [{ fields: sort }]);
          await store.upsert(documents.map((document) => ({ collection, document })));
          const expected = ids([...documents].sort(compareBy(sort)));

          for (const limit of [1, 3, 7, 40, 41]) {
            expect(await pageThrough(collection, { sort, limit })).toEqual(expected);
          }
        },
      );

      it('pages through a filtered selection', async () => {
        const collection = newCollection();
        await store.upsert(documents.map((document) => ({ collection, document })));
        const sort: SortKey[] = [{ field: 'score', direction: 'desc' }, { field: 'rank', direction: 'asc' }, { field: 'id', direction: 'asc' }];
        const filter = { name: { in: ['ash', 'cedar'] }, score: { gte: 1 } };
        const expected = ids(
          documents.filter((d) => d.name !== 'birch' && (d.score as number) >= 1).sort(compareBy(sort)),
        );

        expect(await pageThrough(collection, { sort, filter, limit: 4 })).toEqual(expected);
      });

      it.each(orders.map((sort) => [sort.map((k) => `${k.field} ${k.direction}`).join(', '), sort] as const))(
        'findJson pages through every document exactly once in order: %s',
        async (_label, sort) => {
          const collection = newCollection();
          await store.ensureIndexes(collection, [{ fields: sort, include: ['meta'] }]);
          await store.upsert(documents.map((document) => ({ collection, document })));
          const expected = [...documents].sort(compareBy(sort)).map((document) => JSON.stringify(document.meta));

          for (const limit of [1, 7, 41]) {
            const seen: string[] = [];
            let after: unknown[] | undefined;
            for (let page = 0; page < 100 && seen.length < documents.length; page++) {
              const result = await store.findJson(collection, 'meta', { sort, limit, after });
              seen.push(...result.items);
              if (result.nextAfter === null) break;
              after = result.nextAfter;
            }
            expect(seen).toEqual(expected);
          }
        },
      );

      async function pageThrough(collection: string, options: Omit<FindOptions, 'after'>): Promise<string[]> {
        const seen: string[] = [];
        let after: unknown[] | undefined;
        for (let page = 0; page < 100; page++) {
          const result = await store.find(collection, { ...options, after });
          expect(result.items.length).toBeLessThanOrEqual(options.limit);
          seen.push(...ids(result.items));
          if (result.nextAfter === null) return seen;
          expect(result.items).toHaveLength(options.limit);
          after = result.nextAfter;
        }
        throw new Error('paging did not end');
      }
    });

    describe('indexes', () => {
      it('creating the same indexes again is harmless', async () => {
        const quotes = newCollection();
        const indexes = [
          { fields: [{ field: 'status', direction: 'asc' as const }, { field: 'createdAt', direction: 'desc' as const }] },
          { fields: [{ field: 'customer.email', direction: 'asc' as const }] },
        ];
        await store.ensureIndexes(quotes, indexes);
        await store.ensureIndexes(quotes, indexes);
        await store.upsert([{ collection: quotes, document: { id: 'q1', status: 'draft', createdAt: 1 } }]);
        expect(await store.count(quotes, { status: 'draft' })).toBe(1);
      });

      it('refuses to include fields in a unique index', async () => {
        await expect(
          store.ensureIndexes(newCollection(), [{ fields: [{ field: 'hash', direction: 'asc' }], unique: true, include: ['view'] }]),
        ).rejects.toThrow();
      });

      it('a unique index refuses a second document with the same value, and the refused call writes nothing', async () => {
        const keys = newCollection();
        await store.ensureIndexes(keys, [{ fields: [{ field: 'hash', direction: 'asc' }], unique: true }]);
        await store.upsert([{ collection: keys, document: { id: 'k1', hash: 'abc' } }]);

        const outcome = await store
          .upsert([
            { collection: keys, document: { id: 'k2', hash: 'def' } },
            { collection: keys, document: { id: 'k3', hash: 'abc' } },
          ])
          .then(
            () => 'applied',
            () => 'refused',
          );
        expect(outcome).toBe('refused');
        expect(await store.count(keys)).toBe(1);
      });
    });

    describe('checkpoints', () => {
      it('reads a missing checkpoint as null, then the last saved position', async () => {
        const name = newName();
        expect(await store.getCheckpoint(name)).toBeNull();
        await store.saveCheckpoint(name, 42);
        expect(await store.getCheckpoint(name)).toBe(42);
        await store.saveCheckpoint(name, 0);
        expect(await store.getCheckpoint(name)).toBe(0);
      });

      it('saves several checkpoints at once', async () => {
        const [first, second] = [newName(), newName()];
        await store.saveCheckpoint(first, 3);
        await store.saveCheckpoints([{ name: first, position: 9 }, { name: second, position: 4 }]);
        expect(await store.getCheckpoint(first)).toBe(9);
        expect(await store.getCheckpoint(second)).toBe(4);
      });

      it('forgets the checkpoints it is told to, and keeps the others', async () => {
        const [first, second, kept] = [newName(), newName(), newName()];
        await store.saveCheckpoints([{ name: first, position: 1 }, { name: second, position: 2 }, { name: kept, position: 3 }]);
        await store.deleteCheckpoints([first, second, newName()]);
        expect([await store.getCheckpoint(first), await store.getCheckpoint(second), await store.getCheckpoint(kept)]).toEqual([null, null, 3]);
        await store.deleteCheckpoints([]);
        expect(await store.getCheckpoint(kept)).toBe(3);
      });

      it('saves a checkpoint together with the writes of an upsert', async () => {
        const name = newName();
        const collection = newCollection();
        const guard = { field: '_pos', value: 7 };
        expect(await store.upsert([{ collection, document: { id: 'a', n: 1 }, guard }], { name, position: 7 })).toBe(1);
        expect(await store.getCheckpoint(name)).toBe(7);
        expect(await store.get(collection, 'a')).toMatchObject({ n: 1 });
      });
    });

    describe('bulk writer', () => {
      const guard = (value: number) => ({ field: '_pos', value });

      it('applies guarded upserts write after write, each with its checkpoints', async () => {
        const collection = newCollection();
        const name = newName();
        const writer = store.openBulkWriter();
        try {
          const first = [
            { collection, document: { id: 'a', n: 1 }, guard: guard(1) },
            { collection, document: { id: 'b', n: 1 }, guard: guard(2) },
          ];
          expect(await writer.write(first, [{ name, position: 2 }])).toBe(2);
          expect(await store.getCheckpoint(name)).toBe(2);
          // A replayed write of `a` changes nothing; the newer one of `b` replaces it.
          const second = [
            { collection, document: { id: 'a', n: 0 }, guard: guard(1) },
            { collection, document: { id: 'b', n: 2 }, guard: guard(3) },
          ];
          expect(await writer.write(second, [{ name, position: 3 }])).toBe(1);
          expect(await writer.write([], [{ name, position: 5 }])).toBe(0);
        } finally {
          await writer.close();
        }
        expect(await store.get(collection, 'a')).toEqual({ id: 'a', n: 1, _pos: 1 });
        expect(await store.get(collection, 'b')).toEqual({ id: 'b', n: 2, _pos: 3 });
        expect(await store.getCheckpoint(name)).toBe(5);
      });

      it('refuses a document without an id and a bad collection name', async () => {
        const name = newName();
        const writer = store.openBulkWriter();
        try {
          await expect(writer.write([{ collection: newCollection(), document: { id: '' } }], [{ name, position: 1 }])).rejects.toThrow(/id/);
          await expect(writer.write([{ collection: 'Bad-Name', document: { id: 'a' } }], [{ name, position: 1 }])).rejects.toThrow(/collection name/);
        } finally {
          await writer.close();
        }
        expect(await store.getCheckpoint(name)).toBeNull();
      });
    });
  });
}

/** The order every adapter must produce: missing and null first, then numbers, then strings. */
function compareBy(sort: SortKey[]): (a: ReadDocument, b: ReadDocument) => number {
  const rank = (value: unknown): number => (value === null || value === undefined ? 0 : typeof value === 'string' ? 2 : 1);
  const read = (document: ReadDocument, path: string): unknown =>
    path.split('.').reduce<unknown>((value, part) => (value as Record<string, unknown> | undefined)?.[part], document);
  return (a, b) => {
    for (const { field, direction } of sort) {
      const x = read(a, field);
      const y = read(b, field);
      const byType = rank(x) - rank(y);
      const difference = byType !== 0 ? byType : rank(x) === 0 ? 0 : x! < y! ? -1 : x! > y! ? 1 : 0;
      if (difference !== 0) return direction === 'asc' ? difference : -difference;
    }
    return 0;
  };
}
