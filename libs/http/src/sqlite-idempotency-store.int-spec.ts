import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { IDEMPOTENCY_CLAIM_MS, IDEMPOTENCY_TTL_MS, InMemoryIdempotencyStore } from './idempotency';
import { claimFor, created, describeIdempotencyStoreContract, scope, t0 } from './testing/idempotency-store.contract';
import { SqliteIdempotencyStore } from './sqlite-idempotency-store';

describeIdempotencyStoreContract('InMemoryIdempotencyStore', () => ({ store: new InMemoryIdempotencyStore(), cleanup: async () => undefined }));

describeIdempotencyStoreContract('SqliteIdempotencyStore', () => {
  const dir = mkdtempSync(join(tmpdir(), 'idempotency-'));
  const store = new SqliteIdempotencyStore({ file: join(dir, 'idempotency.db') });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SqliteIdempotencyStore on a file', () => {
  let dir: string;
  let file: string;
  const open: SqliteIdempotencyStore[] = [];
  const openStore = () => {
    const store = new SqliteIdempotencyStore({ file });
    open.push(store);
    return store;
  };
  /** The records in the file, read as another process would. */
  const rows = (): Array<{ key: string; state: string }> => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare('SELECT key, state FROM idempotency_keys ORDER BY key').all() as Array<{ key: string; state: string }>;
    } finally {
      db.close();
    }
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'idempotency-'));
    file = join(dir, 'data', 'idempotency.db');
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((store) => store.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps stored responses and live claims when closed and opened again (a restart of the gateway)', async () => {
    const first = openStore();
    await first.put(scope, 'done', created(t0, '"v3"'));
    expect(await first.claim(scope, 'running', claimFor('a', t0), t0)).toBe(true);
    await first.close();

    const reopened = openStore();
    expect(await reopened.get(scope, 'done', t0 + 1_000)).toEqual(created(t0, '"v3"'));
    expect(await reopened.claim(scope, 'done', claimFor('b', t0 + 1_000), t0 + 1_000)).toBe(false);
    expect(await reopened.claim(scope, 'running', claimFor('b', t0 + 1_000), t0 + 1_000)).toBe(false);
    await reopened.release(scope, 'running', 'a');
    expect(await reopened.claim(scope, 'running', claimFor('b', t0 + 1_000), t0 + 1_000)).toBe(true);
  });

  it('shares claims and responses between two stores on the same file, as two gateway processes on one DATA_DIR', async () => {
    const [a, b] = [openStore(), openStore()];
    expect(await a.claim(scope, 'k1', claimFor('a', t0), t0)).toBe(true);
    expect(await b.claim(scope, 'k1', claimFor('b', t0), t0)).toBe(false);
    await a.put(scope, 'k1', created(t0));
    expect(await b.get(scope, 'k1', t0 + 1)).toEqual(created(t0));
  });

  it('stores a body up to the 1 MiB request limit exactly as it is given', async () => {
    const store = openStore();
    const body = JSON.stringify({ note: 'é€😀 '.repeat(1024 * 1024 / 16) });
    await store.put(scope, 'big', { ...created(t0), body });
    expect((await store.get(scope, 'big', t0))!.body).toBe(body);
  });

  it('deletes expired responses and lapsed claims, at most once a minute, and keeps live ones', async () => {
    const store = openStore();
    await store.put(scope, 'expired-response', created(t0 - IDEMPOTENCY_TTL_MS));
    // taken a minute ago (the last sweep), lapsed since
    expect(await store.claim(scope, 'lapsed-claim', claimFor('a', t0 - 60_000), t0 - 60_000)).toBe(true);
    await store.put(scope, 'live-response', created(t0));

    expect(await store.claim(scope, 'live-claim', claimFor('b', t0), t0)).toBe(true);
    expect(rows()).toEqual([
      { key: 'live-claim', state: 'running' },
      { key: 'live-response', state: 'done' },
    ]);

    await store.put(scope, 'expires-soon', created(t0 + 1_000 - IDEMPOTENCY_TTL_MS));
    expect(await store.claim(scope, 'other', claimFor('c', t0 + 30_000), t0 + 30_000)).toBe(true);
    expect(rows().map((row) => row.key)).toContain('expires-soon');
    expect(await store.claim(scope, 'other-2', claimFor('c', t0 + 60_000), t0 + 60_000)).toBe(true);
    expect(rows().map((row) => row.key)).not.toContain('expires-soon');
    expect(rows().map((row) => row.key)).toContain('live-response');
  });

  it('deletes a backlog of expired records a chunk per turn of the event loop', async () => {
    const store = openStore();
    await store.get(scope, 'none', t0); // the file and its table exist from the first use
    const db = new Database(file);
    try {
      const insert = db.prepare("INSERT INTO idempotency_keys (scope, key, state, owner, expires_at) VALUES (?, ?, 'running', 'gone', ?)");
      db.transaction(() => {
        for (let i = 0; i < 2_500; i++) insert.run(scope, `old-${i}`, t0 - 1);
      })();
    } finally {
      db.close();
    }

    expect(await store.claim(scope, 'new', claimFor('a', t0), t0)).toBe(true);
    expect(rows().length).toBeGreaterThan(1);
    // The later chunks follow on later turns (each a synced commit: slow on a busy machine).
    for (const deadline = Date.now() + 10_000; rows().length > 1 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(rows()).toEqual([{ key: 'new', state: 'running' }]);
  });
});
