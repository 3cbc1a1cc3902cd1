import { Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import { closeSqliteDatabase, openSqliteDatabase } from '@lib/shared';
import { IdempotencyClaim, IdempotencyStore, StoredResponse } from './idempotency';

export interface SqliteIdempotencyStoreOptions {
  /** Database file (its directory is created if missing), or `':memory:'` for tests. */
  file: string;
  /** How long a writer waits for another process holding the write lock. */
  busyTimeoutMs?: number;
}

/** How often this process deletes expired records, at most. */
const SWEEP_EVERY_MS = 60_000;
/** Expired records deleted per statement: a backlog goes a chunk per turn of the event loop, never in one long stall. */
const DELETE_CHUNK = 1_000;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'done')),
    owner TEXT,
    body_hash TEXT,
    status INTEGER,
    body TEXT,
    etag TEXT,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
  );
  CREATE INDEX IF NOT EXISTS idempotency_keys_expires_at ON idempotency_keys (expires_at);
`;

interface ResponseRow {
  body_hash: string;
  status: number;
  body: string;
  etag: string | null;
  expires_at: number;
}

/**
 * The embedded mode's idempotency records, in a SQLite file of their own in DATA_DIR, so that a
 * retry after a restart of the gateway replays the first answer instead of running the request
 * again (a second quote, and a quote number spent). Every process on the same DATA_DIR shares
 * them, as gateways share MongoIdempotencyStore.
 *
 * One row per scope and key, as in MongoIdempotencyStore: first a claim, which only one request
 * can take (a single upsert that overwrites only an expired row), then the response that replaces
 * it. `expires_at` is the claim's lapse while running, the response's expiry once done.
 */
export class SqliteIdempotencyStore extends IdempotencyStore {
  private readonly logger = new Logger('Idempotency');
  /** Opened on first use: every process loads this module, and only the gateway answers POSTs. */
  private opened: Opened | null = null;
  private lastSweep = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: SqliteIdempotencyStoreOptions) {
    super();
  }

  private get sql(): Opened {
    return (this.opened ??= openStatements(this.options));
  }

  async get(scope: string, key: string, now: number): Promise<StoredResponse | null> {
    const row = this.sql.selectResponse.get(scope, key, now) as ResponseRow | undefined;
    if (!row) return null;
    return { bodyHash: row.body_hash, status: row.status, body: row.body, ...(row.etag !== null ? { etag: row.etag } : {}), expiresAt: row.expires_at };
  }

  async put(scope: string, key: string, response: StoredResponse): Promise<void> {
    this.sql.storeResponse.run(scope, key, response.bodyHash, response.status, response.body, response.etag ?? null, response.expiresAt);
  }

  async claim(scope: string, key: string, claim: IdempotencyClaim, now: number): Promise<boolean> {
    this.sweepWhenDue(now);
    return this.sql.takeClaim.run({ scope, key, owner: claim.owner, until: claim.until, now }).changes === 1;
  }

  async release(scope: string, key: string, owner: string): Promise<void> {
    this.sql.dropClaim.run(scope, key, owner);
  }

  async renew(scope: string, key: string, owner: string, until: number): Promise<void> {
    this.sql.renewClaim.run(until, scope, key, owner);
  }

  async close(): Promise<void> {
    if (this.opened) closeSqliteDatabase(this.opened.db);
  }

  /**
   * Deletes expired records at most once a minute, on the first claim after it is due; reads
   * already skip them, so this only keeps the file from growing. A failure is logged, never the
   * request's.
   */
  private sweepWhenDue(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    this.deleteExpired(now);
  }

  private deleteExpired(now: number): void {
    if (!this.opened?.db.open) return;
    try {
      if (this.opened.deleteExpiredChunk.run(now).changes === DELETE_CHUNK) setImmediate(() => this.deleteExpired(now));
    } catch (error) {
      this.logger.warn(`deleting expired idempotency keys failed: ${String(error)}`);
    }
  }
}

interface Opened {
  db: Database.Database;
  selectResponse: Database.Statement;
  storeResponse: Database.Statement;
  takeClaim: Database.Statement;
  dropClaim: Database.Statement;
  renewClaim: Database.Statement;
  deleteExpiredChunk: Database.Statement;
}

function openStatements(options: SqliteIdempotencyStoreOptions): Opened {
  // FULL: a response must be on disk as surely as the events it answers (the event store syncs
  // every commit), or after a power loss its key would run the request a second time.
  const db = openSqliteDatabase(options.file, { busyTimeoutMs: options.busyTimeoutMs ?? 5_000, synchronous: 'FULL' });
  db.exec(SCHEMA);
  return {
    db,
    selectResponse: db.prepare(
      "SELECT body_hash, status, body, etag, expires_at FROM idempotency_keys WHERE scope = ? AND key = ? AND state = 'done' AND expires_at > ?",
    ),
    storeResponse: db.prepare(
      "INSERT OR REPLACE INTO idempotency_keys (scope, key, state, owner, body_hash, status, body, etag, expires_at) VALUES (?, ?, 'done', NULL, ?, ?, ?, ?, ?)",
    ),
    // The conflict's update runs only when the row there has expired (a lapsed claim, a response
    // older than 24 h); otherwise nothing changes, and the claim is refused.
    takeClaim: db.prepare(`
      INSERT INTO idempotency_keys (scope, key, state, owner, expires_at) VALUES (@scope, @key, 'running', @owner, @until)
      ON CONFLICT (scope, key) DO UPDATE SET
        state = 'running', owner = excluded.owner, body_hash = NULL, status = NULL, body = NULL, etag = NULL, expires_at = excluded.expires_at
      WHERE idempotency_keys.expires_at <= @now
    `),
    dropClaim: db.prepare("DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND state = 'running' AND owner = ?"),
    renewClaim: db.prepare("UPDATE idempotency_keys SET expires_at = ? WHERE scope = ? AND key = ? AND state = 'running' AND owner = ?"),
    deleteExpiredChunk: db.prepare(`DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ? LIMIT ${DELETE_CHUNK})`),
  };
}
