import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '@lib/event-store';
import { SqliteIdempotencyStore } from '@lib/http/sqlite-idempotency-store';
import { SqliteMessageBus } from '@lib/message-bus';
import { SqliteReadStore } from '@lib/read-store';
import { RELAY_CHECKPOINT } from '@lib/runtime/relay';
import { exited, firstLine, waitFor } from '@lib/shared/testing/processes';
import { generatedDataDir } from './testing/generated-data-dir';
import { runCli } from './testing/run-cli';

const STORES = ['events.db', 'read-models.db', 'bus.db', 'idempotency.db'];
const EMBEDDED = (dataDir: string) => ({ DATA_DIR: dataDir, EVENTSTORE_URL: undefined, MONGODB_URL: undefined, KAFKA_BROKERS: undefined });
const backup = (dataDir: string, ...argv: string[]) => runCli(EMBEDDED(dataDir), ['backup', ...argv]);

/** Every row of every table of a database file, by table, in rowid order. */
function contentOf(file: string): Record<string, unknown[]> {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[];
    return Object.fromEntries(tables.map((table) => [table, db.prepare(`SELECT rowid, * FROM "${table}" ORDER BY rowid`).raw().all()]));
  } finally {
    db.close();
  }
}

/** Reads one value from a database file (a copy, or a store while it is written). */
function valueIn(file: string, sql: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return Number(db.prepare(sql).pluck().get() ?? 0);
  } finally {
    db.close();
  }
}

function integrityOf(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('integrity_check', { simple: true }) as string;
  } finally {
    db.close();
  }
}

describe('backup <dir>', () => {
  let parent: string;
  beforeEach(() => {
    parent = mkdtempSync(join(tmpdir(), 'cli-backup-'));
  });
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  describe('while a writer commits to every store in the order the product does', () => {
    let dataDir: string;
    let writer: ChildProcess;

    /**
     * One counter, written by each step of the product's pipeline in its order, each a commit of
     * its own: the gateway appends the event and then stores its answer under the idempotency
     * key; the projector moves its checkpoint past the event; the relay publishes it to the bus,
     * then moves its checkpoint; the outbox consumer writes what it did into the read store, then
     * commits its offset on the bus.
     */
    const WRITER = `
      const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
      const { join } = require('node:path');
      const open = (name) => {
        const db = new Database(join(process.env.DATA_DIR, name), { timeout: 5000 });
        db.pragma('synchronous = NORMAL');
        return db;
      };
      const [events, reads, bus, idempotency] = ['events.db', 'read-models.db', 'bus.db', 'idempotency.db'].map(open);
      const append = events.prepare("INSERT INTO events (id, stream_id, revision, type, data, metadata, recorded_at) VALUES ('counter-' || @i, 'counter', @i, 'counter.v1.counted', '{}', '{}', 0)");
      const answer = idempotency.prepare("INSERT INTO idempotency_keys (scope, key, state, status, body, body_hash, expires_at) VALUES ('counter', @i, 'done', 201, '{}', '', 9e15)");
      const checkpoint = reads.prepare('INSERT INTO read_checkpoints (name, position) VALUES (@name, @i) ON CONFLICT (name) DO UPDATE SET position = excluded.position');
      const publish = bus.prepare("INSERT INTO bus_messages (topic, partition, key, value, published_at) VALUES ('domain-events', 0, 'counter', @i, 0)");
      const commit = bus.prepare("INSERT INTO bus_offsets (group_id, topic, committed) VALUES ('outbox', 'domain-events', @i) ON CONFLICT (group_id, topic) DO UPDATE SET committed = excluded.committed");
      for (let i = 1; ; i++) {
        append.run({ i });
        answer.run({ i });
        checkpoint.run({ name: 'counter', i });
        publish.run({ i });
        checkpoint.run({ name: ${JSON.stringify(RELAY_CHECKPOINT)}, i });
        checkpoint.run({ name: 'outbox:handled', i });
        commit.run({ i });
        if (i === 1) process.stdout.write('writing\\n');
      }
    `;

    /** The counter as each step left it in the files of `dir`, in the pipeline's order. */
    function counters(dir: string) {
      return {
        event: valueIn(join(dir, 'events.db'), "SELECT MAX(revision) FROM events WHERE stream_id = 'counter'"),
        answer: valueIn(join(dir, 'idempotency.db'), "SELECT MAX(CAST(key AS INTEGER)) FROM idempotency_keys WHERE scope = 'counter'"),
        projected: valueIn(join(dir, 'read-models.db'), "SELECT position FROM read_checkpoints WHERE name = 'counter'"),
        published: valueIn(join(dir, 'bus.db'), "SELECT MAX(CAST(value AS INTEGER)) FROM bus_messages WHERE key = 'counter'"),
        relayed: valueIn(join(dir, 'read-models.db'), `SELECT position FROM read_checkpoints WHERE name = '${RELAY_CHECKPOINT}'`),
        handled: valueIn(join(dir, 'read-models.db'), "SELECT position FROM read_checkpoints WHERE name = 'outbox:handled'"),
        committed: valueIn(join(dir, 'bus.db'), "SELECT committed FROM bus_offsets WHERE group_id = 'outbox'"),
      };
    }

    beforeAll(async () => {
      // a log of some size, so that copying it takes a while
      ({ dataDir } = await generatedDataDir('cli-backup-live-', 3_000));
      const reads = new SqliteReadStore({ file: join(dataDir, 'read-models.db') });
      await reads.upsert(Array.from({ length: 2_000 }, (_, i) => ({ collection: 'widgets', document: { id: `w${i}`, body: 'x'.repeat(200) } })));
      await reads.close();
      await new SqliteMessageBus({ file: join(dataDir, 'bus.db') }).close();
      const idempotency = new SqliteIdempotencyStore({ file: join(dataDir, 'idempotency.db') });
      await idempotency.put('seed', 'k', { bodyHash: '', status: 201, body: '{}', expiresAt: 9e15 });
      await idempotency.close();
      writer = spawn(process.execPath, ['-e', WRITER], { env: { ...process.env, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'inherit'] });
      await firstLine(writer);
    }, 60_000);

    afterAll(async () => {
      writer.kill();
      await exited(writer);
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('then every copy holds the counters of one instant, while the writer carried on during the copy', async () => {
      for (let round = 0; round < 3; round++) {
        const dir = join(parent, `backup-${round}`);
        const started = performance.now();
        const { code, out, err } = await backup(dataDir, dir, '--json');
        const tookMs = performance.now() - started;
        expect([code, err]).toEqual([0, '']);
        const live = counters(dataDir);
        const copied = counters(dir);

        // As the files were at one instant: round n of the pipeline done up to some step, the
        // steps after it still at round n - 1. A file copied later than another shows a step
        // ahead of one before it (a checkpoint past the log's head, an offset past the work done).
        const n = copied.event;
        const done = Object.values(copied).filter((value) => value === n).length;
        expect(copied).toEqual(Object.fromEntries(Object.keys(copied).map((step, i) => [step, i < done ? n : n - 1])));
        // The writer carried on after the instant of the copy. (How long writers were held is
        // reported, a part of the run; no bound on it here: a timing would fail on a slow machine.)
        expect(live.committed).toBeGreaterThan(copied.event);
        const { heldWritersMs } = JSON.parse(out);
        expect(Number.isInteger(heldWritersMs) && heldWritersMs >= 0 && heldWritersMs <= Math.ceil(tookMs)).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }, 60_000);
  });

  describe('given a store the product wrote, then the restored copy', () => {
    let dataDir: string;
    let head: number;
    const SEQUENCE_BEFORE_RESTORE = 5;

    beforeAll(async () => {
      ({ dataDir, head } = await generatedDataDir('cli-backup-restore-', 300));
      const reads = new SqliteReadStore({ file: join(dataDir, 'read-models.db') });
      await reads.upsert([{ collection: 'widgets', document: { id: 'w1', size: 1200 } }], { name: 'widgets', position: head });
      await reads.saveCheckpoint(RELAY_CHECKPOINT, head);
      await reads.close();

      // The outbox consumed every message, and the retention deleted them all: only AUTOINCREMENT's
      // counter still says which offsets the group has passed.
      let now = 1_000;
      const bus = new SqliteMessageBus({ file: join(dataDir, 'bus.db'), retentionMs: 0, now: () => now, pollIntervalMs: 10 });
      await bus.publish('domain-events', Array.from({ length: SEQUENCE_BEFORE_RESTORE }, (_, i) => ({ key: 'k', value: String(i) })));
      const consumer = await bus.consume({ groupId: 'outbox', topics: ['domain-events'], handleBatch: async () => undefined });
      await waitFor(() => valueIn(join(dataDir, 'bus.db'), "SELECT committed FROM bus_offsets WHERE group_id = 'outbox'") === SEQUENCE_BEFORE_RESTORE);
      await consumer.stop();
      now += 1_000;
      expect(bus.deleteExpired()).toBe(SEQUENCE_BEFORE_RESTORE);
      await bus.close();

      const idempotency = new SqliteIdempotencyStore({ file: join(dataDir, 'idempotency.db') });
      await idempotency.put('org_1', 'key-1', { bodyHash: 'h', status: 201, body: '{"id":"quo_1"}', etag: '"1"', expiresAt: 9e15 });
      await idempotency.close();
    }, 60_000);

    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

    it('holds every row of every store, passes the integrity check, and keeps the bus offsets going on', async () => {
      const dir = join(parent, 'backup');
      const { code, out, err } = await backup(dataDir, dir);
      expect([code, err]).toEqual([0, '']);
      expect(out).toContain(`events.db: ${head} rows, ${statSync(join(dir, 'events.db')).size} bytes; head of the event log: position ${head}\n`);
      expect(out).toMatch(/^bus\.db: \d+ rows, \d+ bytes$/m);
      expect(out).toMatch(/^backed up .+ as of one instant to .+ \(writers held for \d+ ms\)$/m);

      for (const store of STORES) {
        expect([store, contentOf(join(dir, store))]).toEqual([store, contentOf(join(dataDir, store))]);
        expect([store, integrityOf(join(dir, store))]).toEqual([store, 'ok']);
      }

      // restored into a DATA_DIR of its own and opened as the product opens it
      const restored = join(parent, 'restored');
      cpSync(dir, restored, { recursive: true });
      const events = new SqliteEventStore({ file: join(restored, 'events.db') });
      const reads = new SqliteReadStore({ file: join(restored, 'read-models.db') });
      const idempotency = new SqliteIdempotencyStore({ file: join(restored, 'idempotency.db') });
      const bus = new SqliteMessageBus({ file: join(restored, 'bus.db'), pollIntervalMs: 10 });
      try {
        expect(await events.headPosition()).toBe(head);
        expect(await reads.getCheckpoint(RELAY_CHECKPOINT)).toBe(head);
        expect(await reads.get('widgets', 'w1')).toMatchObject({ id: 'w1', size: 1200 });
        expect(await idempotency.get('org_1', 'key-1', 0)).toMatchObject({ status: 201, body: '{"id":"quo_1"}', etag: '"1"' });
        // A message published after the restore reaches the outbox group, which had committed past
        // offset 5 before: without AUTOINCREMENT's counter it would be given offset 1 and skipped.
        const received: string[] = [];
        const consumer = await bus.consume({ groupId: 'outbox', topics: ['domain-events'], handleBatch: async (batch) => void received.push(...batch.map((m) => m.value)) });
        await bus.publish('domain-events', [{ key: 'k', value: 'after the restore' }]);
        await waitFor(() => received.length > 0);
        await consumer.stop();
        expect(received).toEqual(['after the restore']);
      } finally {
        await Promise.all([events.close(), reads.close(), idempotency.close(), bus.close()]);
      }
    });
  });

  describe('the key files and PDFs', () => {
    it('given keys readable by others, then the copies and the stores are 0600 in a 0700 directory, and the PDFs come along without files half written', async () => {
      const { dataDir } = await generatedDataDir('cli-backup-keys-', 10);
      try {
        writeFileSync(join(dataDir, 'admin-token'), 'token\n', { mode: 0o644 });
        writeFileSync(join(dataDir, 'quote-link.key'), 'secret\n', { mode: 0o644 });
        mkdirSync(join(dataDir, 'pdfs', 'org_1'), { recursive: true });
        writeFileSync(join(dataDir, 'pdfs', 'org_1', 'quo_1.pdf'), '%PDF-1.7 one', { mode: 0o600 });
        writeFileSync(join(dataDir, 'pdfs', 'org_1', 'quo_2.pdf.123.abc.tmp'), '%PDF half', { mode: 0o600 });
        const dir = join(parent, 'nested', 'backup');

        const { code, out } = await backup(dataDir, dir);

        expect(code).toBe(0);
        expect(out).toContain('keys: admin-token, quote-link.key (mode 0600)\n');
        expect(out).toContain('pdfs/: 1 files, 12 bytes\n');
        expect(out).toContain('idempotency.db: not in DATA_DIR, nothing to copy\n');
        expect(statSync(dir).mode & 0o777).toBe(0o700);
        for (const key of ['admin-token', 'quote-link.key']) {
          expect([key, statSync(join(dir, key)).mode & 0o777]).toEqual([key, 0o600]);
          expect(readFileSync(join(dir, key))).toEqual(readFileSync(join(dataDir, key)));
        }
        expect(readdirSync(join(dir, 'pdfs', 'org_1'))).toEqual(['quo_1.pdf']);
        expect(readFileSync(join(dir, 'pdfs', 'org_1', 'quo_1.pdf'), 'utf8')).toBe('%PDF-1.7 one');
        expect(statSync(join(dir, 'events.db')).mode & 0o777).toBe(0o600);
        expect(readdirSync(dir).sort()).toEqual(['admin-token', 'events.db', 'pdfs', 'quote-link.key']);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('refusals', () => {
    let dataDir: string;
    beforeAll(async () => {
      ({ dataDir } = await generatedDataDir('cli-backup-refusals-', 10));
    });
    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

    it('given a directory that already holds a backup, then it exits 2 and overwrites nothing', async () => {
      const dir = join(parent, 'backup');
      mkdirSync(dir);
      writeFileSync(join(dir, 'read-models.db'), 'an earlier backup');

      const { code, out, err } = await backup(dataDir, dir);

      expect([code, out]).toEqual([2, '']);
      expect(err).toContain(`backup: ${dir} already holds read-models.db: back up into a new or empty directory (nothing was written)`);
      expect(readdirSync(dir)).toEqual(['read-models.db']);
      expect(readFileSync(join(dir, 'read-models.db'), 'utf8')).toBe('an earlier backup');
    });

    it('given a DATA_DIR that does not exist or holds no event log, then it exits 2 and creates no store and no backup', async () => {
      const missing = join(parent, 'mistyped');
      const empty = join(parent, 'empty');
      mkdirSync(empty);
      for (const source of [missing, empty]) {
        const { code, err } = await backup(source, join(parent, 'backup'));
        expect(code).toBe(2);
        expect(err).toMatch(/^Invalid configuration: DATA_DIR \(.+\) (is not an existing directory|holds no event log \(events\.db\))/);
      }
      expect(existsSync(missing)).toBe(false);
      expect(readdirSync(empty)).toEqual([]);
      expect(existsSync(join(parent, 'backup'))).toBe(false);
    });

    it('given EVENTSTORE_URL set, then it exits 2 and names the engines\' own backups', async () => {
      const { code, err } = await runCli({ ...EMBEDDED(dataDir), EVENTSTORE_URL: 'esdb://localhost:2113?tls=false' }, ['backup', join(parent, 'backup')]);
      expect(code).toBe(2);
      expect(err).toContain('backup copies the event log in DATA_DIR, and EVENTSTORE_URL is set: back up the engines with their own tools (EventStoreDB:');
      expect(existsSync(join(parent, 'backup'))).toBe(false);
    });

    it.each([
      [{ MONGODB_URL: 'mongodb://localhost:27017/quoting' }, ['events.db', 'bus.db'], ['read store: not copied, on MongoDB (MONGODB_URL)']],
      [{ KAFKA_BROKERS: 'localhost:9092' }, ['events.db', 'read-models.db', 'idempotency.db'], ['message bus: not copied, on Kafka (KAFKA_BROKERS)']],
      [
        { MONGODB_URL: 'mongodb://localhost:27017/quoting', KAFKA_BROKERS: 'localhost:9092' },
        ['events.db'],
        ['read store: not copied, on MongoDB (MONGODB_URL)', 'message bus: not copied, on Kafka (KAFKA_BROKERS)'],
      ],
    ])('given the event log embedded and %j, then it copies the embedded stores in use only, and says what is left to the engines', async (engines, copied, notes) => {
      // A DATA_DIR with all four stores (left from an embedded run): the ones the engines replace are not the product's state.
      const all = join(parent, 'data');
      cpSync(dataDir, all, { recursive: true });
      const idempotency = new SqliteIdempotencyStore({ file: join(all, 'idempotency.db') });
      await idempotency.put('scope', 'key', { bodyHash: '', status: 201, body: '{}', expiresAt: Date.now() + 60_000 }); // made by its first keyed POST
      for (const store of [new SqliteReadStore({ file: join(all, 'read-models.db') }), new SqliteMessageBus({ file: join(all, 'bus.db') }), idempotency]) await store.close();
      const dir = join(parent, 'backup');
      const { code, out } = await runCli({ ...EMBEDDED(all), ...engines }, ['backup', dir]);
      expect(code).toBe(0);
      expect(readdirSync(dir).filter((name) => name.endsWith('.db')).sort()).toEqual([...copied].sort());
      for (const note of notes) expect(out).toContain(note);
      expect(out).not.toMatch(/not in DATA_DIR/);
      if ('MONGODB_URL' in engines) expect(out).toContain('Take a mongodump of that database BEFORE each backup, never after');
      const json = await runCli({ ...EMBEDDED(all), ...engines }, ['backup', join(parent, 'json'), '--json']);
      expect(JSON.parse(json.out).engines.map((engine: { store: string }) => engine.store)).toEqual(notes.map((note) => note.split(':')[0]));
    });

    it.each([[[]], [['a', 'b']]])('given %j as its arguments, then it exits 2', async (argv) => {
      const { code, err } = await backup(dataDir, ...argv);
      expect(code).toBe(2);
      expect(err).toContain('backup takes one directory: backup <dir>');
    });
  });
});
