import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { IDEMPOTENCY_CLAIM_MS, IDEMPOTENCY_TTL_MS, IdempotencyStore, InMemoryIdempotencyStore, type StoredResponse } from './idempotency';
import { SqliteIdempotencyStore } from './sqlite-idempotency-store';

const t0 = 1_700_000_000_000;
const scope = 'org:org-1 POST /api/v1/submissions/s-1/quotes';
const created = (at: number, etag?: string): StoredResponse => ({
  bodyHash: 'hash-a',
  status: 201,
  body: '{"quoteId":"q-1"}',
  ...(etag ? { etag } : {}),
  expiresAt: at + IDEMPOTENCY_TTL_MS,
});
const claimFor = (owner: string, at: number) => ({ owner, until: at + IDEMPOTENCY_CLAIM_MS });

/** The IdempotencyStore port's contract: what registerIdempotency relies on, whatever keeps the records. */
function describeIdempotencyStoreContract(name: string, open: () => { store: IdempotencyStore; cleanup: () => Promise<void> }) {
  describe(`${name} (IdempotencyStore contract)`, () => {
    let store: IdempotencyStore;
    let cleanup: () => Promise<void>;
    beforeEach(() => {
      ({ store, cleanup } = open());
    });
    afterEach(() => cleanup());

    it('replays the stored response, with its ETag, until 24 hours after it was stored', async () => {
      expect(await store.claim(scope, 'k1', claimFor('a', t0), t0)).toBe(true);
      await store.put(scope, 'k1', created(t0, '"v1"'));

      expect(await store.get(scope, 'k1', t0 + 1_000)).toEqual(created(t0, '"v1"'));
      expect(await store.get(scope, 'k1', t0 + IDEMPOTENCY_TTL_MS - 1)).toEqual(created(t0, '"v1"'));
      expect(await store.get(scope, 'k1', t0 + IDEMPOTENCY_TTL_MS)).toBeNull();
    });

    it('keeps keys apart by scope and by key', async () => {
      await store.put(scope, 'k1', created(t0));
      expect(await store.get(scope, 'k2', t0)).toBeNull();
      expect(await store.get('org:org-2 POST /api/v1/submissions/s-1/quotes', 'k1', t0)).toBeNull();
      expect(await store.claim('org:org-2 POST /api/v1/submissions/s-1/quotes', 'k1', claimFor('b', t0), t0)).toBe(true);
    });

    it("refuses another owner's claim while it is live, and grants it once the claim lapses", async () => {
      expect(await store.claim(scope, 'k1', claimFor('a', t0), t0)).toBe(true);
      expect(await store.claim(scope, 'k1', claimFor('b', t0 + 1_000), t0 + 1_000)).toBe(false);
      expect(await store.claim(scope, 'k1', claimFor('b', t0 + IDEMPOTENCY_CLAIM_MS - 1), t0 + IDEMPOTENCY_CLAIM_MS - 1)).toBe(false);
      expect(await store.claim(scope, 'k1', claimFor('b', t0 + IDEMPOTENCY_CLAIM_MS), t0 + IDEMPOTENCY_CLAIM_MS)).toBe(true);
    });

    it('frees the key when its owner releases the claim, not when another owner does', async () => {
      expect(await store.claim(scope, 'k1', claimFor('a', t0), t0)).toBe(true);
      await store.release(scope, 'k1', 'b');
      expect(await store.claim(scope, 'k1', claimFor('b', t0), t0)).toBe(false);
      await store.release(scope, 'k1', 'a');
      expect(await store.claim(scope, 'k1', claimFor('b', t0), t0)).toBe(true);
      expect(await store.get(scope, 'k1', t0)).toBeNull();
    });

    it('refuses a claim while a response is stored, which no release removes, and grants it once the response expired', async () => {
      expect(await store.claim(scope, 'k1', claimFor('a', t0), t0)).toBe(true);
      await store.put(scope, 'k1', created(t0));
      await store.release(scope, 'k1', 'a');

      expect(await store.claim(scope, 'k1', claimFor('b', t0 + 1_000), t0 + 1_000)).toBe(false);
      expect(await store.get(scope, 'k1', t0 + 1_000)).toEqual(created(t0));
      const later = t0 + IDEMPOTENCY_TTL_MS;
      expect(await store.claim(scope, 'k1', claimFor('b', later), later)).toBe(true);
      expect(await store.get(scope, 'k1', later)).toBeNull();
    });
  });
}

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
    expect(await store.claim(scope, 'lapsed-claim', claimFor('a', t0 - IDEMPOTENCY_CLAIM_MS), t0 - IDEMPOTENCY_CLAIM_MS)).toBe(true);
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
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(rows()).toEqual([{ key: 'new', state: 'running' }]);
  });
});
