import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { ReadDocument, ReadStore, SortKey } from '../read-store.port';

interface Row extends ReadDocument {
  organizationId: string;
  createdAt: number;
}

const SORT: SortKey[] = [
  { field: 'createdAt', direction: 'desc' },
  { field: 'id', direction: 'desc' },
];

/** Sort order of the list endpoints: newest first, ties broken by id. */
const before = (a: Row, b: Row) => (a.createdAt !== b.createdAt ? a.createdAt > b.createdAt : a.id > b.id);

/** A page-through scenario: the starting rows, page sizes, and rows inserted between pages. */
const scenario = fc.record({
  initial: fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 60 }),
  pages: fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 40 }),
  insertsBetweenPages: fc.array(fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 3 }), { maxLength: 40 }),
});

/**
 * Keyset pagination as the list endpoints use it: paging through with any page sizes while rows
 * are inserted between pages (older, newer, or tied with the cursor) yields every row that
 * existed at the start exactly once, never a row twice, always in sort order.
 */
export function describePaginationProperties(name: string, factory: () => Promise<{ store: ReadStore; cleanup: () => Promise<void> }>): void {
  describe(`keyset pagination properties: ${name}`, () => {
    let store: ReadStore;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      ({ store, cleanup } = await factory());
    });
    afterAll(async () => {
      await cleanup();
    });

    it('yields every row present at the start exactly once under concurrent inserts, in order', async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async ({ initial, pages, insertsBetweenPages }) => {
          const collection = `p_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
          const rows = (times: number[]): Row[] => times.map((createdAt) => ({ id: randomUUID(), organizationId: 'org_1', createdAt }));
          const insert = (batch: Row[]) => store.upsert(batch.map((document) => ({ collection, document })));
          await store.ensureIndexes(collection, [{ fields: [{ field: 'organizationId', direction: 'asc' }, ...SORT] }]);
          const present = rows(initial);
          await insert(present);

          const seen: Row[] = [];
          let after: unknown[] | undefined;
          for (let page = 0; ; page++) {
            const limit = pages[page % pages.length];
            const result = await store.find<Row>(collection, { filter: { organizationId: 'org_1' }, sort: SORT, limit, after });
            seen.push(...result.items.map(({ id, organizationId, createdAt }) => ({ id, organizationId, createdAt })));
            if (!result.nextAfter) break;
            after = result.nextAfter;
            await insert(rows(insertsBetweenPages[page] ?? []));
          }
          await store.dropCollection(collection);

          const ids = seen.map((row) => row.id);
          expect(new Set(ids).size).toBe(ids.length);
          for (const row of present) expect(ids).toContain(row.id);
          for (let i = 1; i < seen.length; i++) expect(before(seen[i - 1], seen[i])).toBe(true);
        }),
        { numRuns: 40 },
      );
    });
  });
}
