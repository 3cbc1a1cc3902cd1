import { describePaginationProperties } from '@lib/read-store/testing/pagination.properties';
import { SqliteReadStore } from './sqlite-read-store';

describePaginationProperties('SqliteReadStore', async () => {
  const store = new SqliteReadStore({ file: ':memory:' });
  return { store, cleanup: () => store.close() };
});
