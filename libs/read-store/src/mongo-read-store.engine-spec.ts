import { MongoClient } from 'mongodb';
import { describeReadStoreContract } from '@lib/read-store/testing/read-store.contract';
import { requireMongoUrl, uniqueDatabaseName } from '@lib/read-store/testing/mongo-test-database';
import { databaseFromUrl, MongoReadStore, withDatabase } from './mongo-read-store';

const url = requireMongoUrl();

async function dropDatabase(database: string): Promise<void> {
  const client = await MongoClient.connect(url);
  try {
    await client.db(database).dropDatabase();
  } finally {
    await client.close();
  }
}

describeReadStoreContract('MongoReadStore', async () => {
  const database = uniqueDatabaseName('read_store_contract');
  const store = await MongoReadStore.connect({ url, database });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await dropDatabase(database);
    },
  };
});

describe('MongoReadStore', () => {
  const database = uniqueDatabaseName('read_store');
  afterAll(() => dropDatabase(database));

  it('lets exactly one of several processes win a compare-and-set on one document', async () => {
    const stores = await Promise.all(Array.from({ length: 4 }, () => MongoReadStore.connect({ url, database })));
    try {
      await stores[0].upsert([{ collection: 'claims_v1', document: { id: 'd1', owner: 'none' }, guard: { field: '_rev', value: 1 } }]);
      for (let revision = 2; revision < 10; revision++) {
        const applied = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            stores[i % 4].upsert([{ collection: 'claims_v1', document: { id: 'd1', owner: `w${i}` }, guard: { field: '_rev', value: revision } }]),
          ),
        );
        expect(applied.reduce((sum, n) => sum + n, 0)).toBe(1);
      }
    } finally {
      await stores[0].dropCollection('claims_v1');
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('takes the database from the URL path, quoting when the URL names none', () => {
    expect(databaseFromUrl('mongodb://127.0.0.1:27018/quotes_eu?retryWrites=false')).toBe('quotes_eu');
    expect(databaseFromUrl('mongodb://a:1,b:2/')).toBe('quoting');
    expect(databaseFromUrl('mongodb+srv://cluster.example')).toBe('quoting');
    expect(withDatabase('mongodb://a:1,b:2/old?w=majority', 'e2e_1')).toBe('mongodb://a:1,b:2/e2e_1?w=majority');
    expect(withDatabase('mongodb://127.0.0.1:27018', 'e2e_2')).toBe('mongodb://127.0.0.1:27018/e2e_2');
  });

  it('keeps documents and checkpoints across connections, as another process sees them', async () => {
    const writer = await MongoReadStore.connect({ url, database });
    const reader = await MongoReadStore.connect({ url, database });
    try {
      await writer.ensureIndexes('quotes_v1', [{ fields: [{ field: 'reference', direction: 'asc' }], unique: true }]);
      await writer.upsert([{ collection: 'quotes_v1', document: { id: 'q1', reference: 'Q-1' }, guard: { field: 'position', value: 7 } }], { name: 'projection:quotes:v1', position: 7 });

      expect(await reader.get('quotes_v1', 'q1')).toEqual({ id: 'q1', reference: 'Q-1', position: 7 });
      expect(await reader.getCheckpoint('projection:quotes:v1')).toBe(7);
      expect(await reader.listCollections()).toEqual(['quotes_v1']);
      const duplicate = reader.upsert([{ collection: 'quotes_v1', document: { id: 'q2', reference: 'Q-1' } }]);
      expect(await duplicate.then(() => 'applied', () => 'refused')).toBe('refused');
    } finally {
      await Promise.all([writer.close(), reader.close()]);
    }
  });

  it('saves the checkpoint of an upsert without writes', async () => {
    const store = await MongoReadStore.connect({ url, database });
    try {
      expect(await store.upsert([], { name: 'projection:idle:v1', position: 12 })).toBe(0);
      expect(await store.getCheckpoint('projection:idle:v1')).toBe(12);
    } finally {
      await store.close();
    }
  });

  it('a refused upsert puts back the documents it had already replaced, and saves no checkpoint', async () => {
    const store = await MongoReadStore.connect({ url, database, transactions: 'never' });
    try {
      await store.ensureIndexes('keys_v1', [{ fields: [{ field: 'hash', direction: 'asc' }], unique: true }]);
      await store.upsert([
        { collection: 'keys_v1', document: { id: 'k1', hash: 'abc' }, guard: { field: 'position', value: 1 } },
        { collection: 'keys_v1', document: { id: 'k2', hash: 'def' }, guard: { field: 'position', value: 1 } },
      ]);

      const refused = store.upsert(
        [
          { collection: 'other_v1', document: { id: 'o1' }, guard: { field: 'position', value: 2 } },
          { collection: 'keys_v1', document: { id: 'k2', hash: 'ghi' }, guard: { field: 'position', value: 2 } },
          { collection: 'keys_v1', document: { id: 'k3', hash: 'abc' }, guard: { field: 'position', value: 2 } },
        ],
        { name: 'projection:keys:v1', position: 2 },
      );

      await expect(refused).rejects.toThrow();
      expect(await store.get('keys_v1', 'k2')).toEqual({ id: 'k2', hash: 'def', position: 1 });
      expect(await store.get('keys_v1', 'k3')).toBeNull();
      expect(await store.get('other_v1', 'o1')).toBeNull();
      expect(await store.getCheckpoint('projection:keys:v1')).toBeNull();
    } finally {
      await store.close();
    }
  });
});
