import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describeMessageBusContract } from '@lib/message-bus/testing/message-bus.contract';
import { processOwner } from '@lib/shared';
import { exited, firstLine, runTypeScript, waitFor } from '@lib/shared/testing/processes';
import { ConsumedMessage } from './message-bus.port';
import { SqliteMessageBus } from './sqlite-message-bus';

describeMessageBusContract('SqliteMessageBus', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'message-bus-'));
  // A small batch makes a group cross several batches.
  const bus = new SqliteMessageBus({ file: join(dir, 'bus.db'), batchSize: 4, pollIntervalMs: 20, retryDelayMs: 10 });
  return {
    bus,
    cleanup: async () => {
      await bus.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SqliteMessageBus on a file', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'message-bus-'));
    file = join(dir, 'bus.db');
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps messages and committed offsets when closed and reopened', async () => {
    const first = new SqliteMessageBus({ file });
    await first.publish('quotes', [{ key: 'q1', value: '1' }, { key: 'q1', value: '2' }]);
    const before: string[] = [];
    await first.consume({ groupId: 'outbox', topics: ['quotes'], handleBatch: async (batch) => void before.push(...batch.map((m) => m.value)) });
    await waitFor(() => before.length === 2);
    await first.publish('quotes', [{ key: 'q1', value: '3' }]);
    await waitFor(() => before.length === 3);
    await first.close();
    const unread = new SqliteMessageBus({ file });
    await unread.publish('quotes', [{ key: 'q2', value: '4' }]);
    await unread.close();

    const reopened = new SqliteMessageBus({ file, pollIntervalMs: 20 });
    const after: string[] = [];
    const audit: string[] = [];
    await reopened.consume({ groupId: 'outbox', topics: ['quotes'], handleBatch: async (batch) => void after.push(...batch.map((m) => m.value)) });
    await reopened.consume({ groupId: 'audit', topics: ['quotes'], handleBatch: async (batch) => void audit.push(...batch.map((m) => m.value)) });
    await waitFor(() => after.length === 1 && audit.length === 4);
    await reopened.close();

    expect(after).toEqual(['4']);
    expect(audit).toEqual(['1', '2', '3', '4']);
  });

  it('two consumers of one group never both handle a message, and the second takes over when the first stops', async () => {
    const bus = new SqliteMessageBus({ file, batchSize: 3, pollIntervalMs: 20 });
    const handledBy = new Map<string, string[]>();
    const start = (name: string) =>
      bus.consume({
        groupId: 'outbox',
        topics: ['webhooks'],
        handleBatch: async (batch) => {
          for (const message of batch) handledBy.set(message.value, [...(handledBy.get(message.value) ?? []), name]);
          await new Promise((resolve) => setTimeout(resolve, 2));
        },
      });
    const consumers = await Promise.all([start('one'), start('two')]);
    for (let i = 0; i < 20; i++) await bus.publish('webhooks', [{ key: `k${i % 3}`, value: `m${i}` }]);
    await waitFor(() => handledBy.size === 20);

    const [holder] = handledBy.get('m0')!;
    await consumers[holder === 'one' ? 0 : 1].stop();
    await bus.publish('webhooks', [{ key: 'k0', value: 'm20' }]);
    await waitFor(() => handledBy.size === 21);
    await bus.close();

    expect([...handledBy.values()].every((names) => names.length === 1)).toBe(true);
    expect(handledBy.get('m20')).toEqual([holder === 'one' ? 'two' : 'one']);
  });

  it('an idle consumer picks up messages another process publishes to the same file', async () => {
    const bus = new SqliteMessageBus({ file, pollIntervalMs: 20 });
    const received: ConsumedMessage[] = [];
    await bus.consume({ groupId: 'outbox', topics: ['quotes'], handleBatch: async (batch) => void received.push(...batch) });

    const child = runTypeScript(`
      const { SqliteMessageBus } = require(${JSON.stringify(require.resolve('./sqlite-message-bus'))});
      const bus = new SqliteMessageBus({ file: ${JSON.stringify(file)} });
      bus.publish('quotes', [{ key: 'q1', value: 'sent' }, { key: 'q1', value: 'accepted' }]).then(() => bus.close());
    `);
    await exited(child);
    await waitFor(() => received.length === 2);
    await bus.close();

    expect(received.map((m) => m.value)).toEqual(['sent', 'accepted']);
  });

  it('a lease of a consumer on another host, whose process cannot be seen from here, holds until it runs out', async () => {
    const setup = new SqliteMessageBus({ file });
    await setup.publish('webhooks', [{ key: 'w1', value: 'deliver' }]);
    await setup.close();
    const leaseUntil = Date.now() + 500;
    const db = new Database(file);
    db.prepare('INSERT INTO bus_leases (group_id, owner, expires_at) VALUES (?, ?, ?)').run('outbox', 'another-host/1/123e4567-e89b-42d3-a456-426614174000', leaseUntil);
    db.close();

    const bus = new SqliteMessageBus({ file, leaseMs: 300, pollIntervalMs: 20 });
    let receivedAt = 0;
    await bus.consume({ groupId: 'outbox', topics: ['webhooks'], handleBatch: async () => void (receivedAt = Date.now()) });
    await waitFor(() => receivedAt > 0);
    await bus.close();
    expect(receivedAt).toBeGreaterThanOrEqual(leaseUntil);
  });

  it('a consumer that starts takes at once a lease of this host it cannot see (a container restarted in a new PID namespace)', async () => {
    const setup = new SqliteMessageBus({ file });
    await setup.publish('webhooks', [{ key: 'w1', value: 'deliver' }]);
    await setup.close();
    const mark = processOwner();
    mark.release();
    const [host, namespace] = mark.id.split('/');
    const db = new Database(file);
    db.prepare('INSERT INTO bus_leases (group_id, owner, expires_at) VALUES (?, ?, ?)').run('outbox', `${host}/1${namespace}/1/123e4567-e89b-42d3-a456-426614174000`, Date.now() + 600_000);
    db.close();

    const bus = new SqliteMessageBus({ file, leaseMs: 600_000, pollIntervalMs: 20 });
    const received: string[] = [];
    try {
      await bus.consume({ groupId: 'outbox', topics: ['webhooks'], handleBatch: async (batch) => void received.push(...batch.map((m) => m.value)) });
      await waitFor(() => received.length === 1, 3_000);
    } finally {
      await bus.close();
    }
    expect(received).toEqual(['deliver']);
  });

  it('when a consumer on this host is killed, the next takes its lease at once, not when the lease runs out', async () => {
    const child = runTypeScript(`
      const { SqliteMessageBus } = require(${JSON.stringify(require.resolve('./sqlite-message-bus'))});
      const bus = new SqliteMessageBus({ file: ${JSON.stringify(file)}, leaseMs: 600000 });
      setInterval(() => undefined, 1000); // runs until it is killed
      bus.publish('webhooks', [{ key: 'w1', value: 'deliver' }])
        .then(() => bus.consume({
          groupId: 'outbox',
          topics: ['webhooks'],
          handleBatch: () => { console.log('handling'); return new Promise(() => undefined); },
        }));
    `);
    await firstLine(child);
    const bus = new SqliteMessageBus({ file, leaseMs: 600_000, pollIntervalMs: 20 });
    const received: string[] = [];
    try {
      await bus.consume({ groupId: 'outbox', topics: ['webhooks'], handleBatch: async (batch) => void received.push(...batch.map((m) => m.value)) });
      // While the holder runs, its lease holds.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(received).toEqual([]);
      child.kill('SIGKILL');
      await exited(child);
      await waitFor(() => received.length === 1, 5_000);
    } finally {
      await bus.close();
    }
    expect(received).toEqual(['deliver']);
  });

  describe('retention', () => {
    const DAY = 86_400_000;
    const consumeAll = async (bus: SqliteMessageBus, groupId: string, topic: string, count: number) => {
      const seen: string[] = [];
      const consumer = await bus.consume({ groupId, topics: [topic], handleBatch: async (batch) => void seen.push(...batch.map((m) => m.value)) });
      await waitFor(() => seen.length === count);
      await consumer.stop();
      return seen;
    };
    /** Runs SQL on the bus file beside the bus under test, as another process would. */
    const onFile = <T>(work: (db: Database.Database) => T): T => {
      const db = new Database(file);
      try {
        return work(db);
      } finally {
        db.close();
      }
    };
    const commitAt = (groupId: string, topic: string, offset: number) =>
      onFile((db) =>
        db.prepare('INSERT INTO bus_offsets (group_id, topic, committed) VALUES (?, ?, ?) ON CONFLICT (group_id, topic) DO UPDATE SET committed = excluded.committed')
          .run(groupId, topic, offset),
      );
    const storedMessages = () => onFile((db) => db.prepare('SELECT COUNT(*) FROM bus_messages').pluck().get() as number);

    it('deletes messages past the retention once every group of their topic has committed them, and keeps the rest', async () => {
      let now = 1_000 * DAY;
      const bus = new SqliteMessageBus({ file, pollIntervalMs: 20, retentionMs: DAY, now: () => now });
      try {
        await bus.publish('events', [{ key: 'a', value: 'old-1' }, { key: 'a', value: 'old-2' }, { key: 'b', value: 'old-3' }]);
        await bus.publish('other', [{ key: 'x', value: 'never-consumed' }]);
        now += DAY / 2;
        await bus.publish('events', [{ key: 'a', value: 'young' }]);
        expect(await consumeAll(bus, 'outbox', 'events', 4)).toEqual(['old-1', 'old-2', 'old-3', 'young']);
        commitAt('audit', 'events', 2); // a second group, behind: it has handled old-1 and old-2 only

        now += DAY; // old-1…3 are 1.5 days old, young one day
        expect(bus.deleteExpired()).toBe(2);
        commitAt('audit', 'events', 4);
        expect(bus.deleteExpired()).toBe(1); // old-3; young is not past the retention, and no group reads `other`
        expect(bus.deleteExpired()).toBe(0);

        // What is left is what a new group still gets, in order.
        expect(await consumeAll(bus, 'late', 'events', 1)).toEqual(['young']);
        expect(await consumeAll(bus, 'late', 'other', 1)).toEqual(['never-consumed']);
      } finally {
        await bus.close();
      }
    });

    it('deletes in the background, and keeps everything without a retention', async () => {
      let now = 1_000 * DAY;
      const keeping = new SqliteMessageBus({ file, pollIntervalMs: 20, now: () => now });
      await keeping.publish('events', [{ key: 'a', value: '1' }, { key: 'a', value: '2' }]);
      await consumeAll(keeping, 'outbox', 'events', 2);
      now += 30 * DAY;
      expect(keeping.deleteExpired()).toBe(0);
      await keeping.close();
      expect(storedMessages()).toBe(2);

      const expiring = new SqliteMessageBus({ file, retentionMs: DAY, retentionCheckMs: 20, now: () => now });
      try {
        await waitFor(() => storedMessages() === 0);
      } finally {
        await expiring.close();
      }
    });
  });
});
