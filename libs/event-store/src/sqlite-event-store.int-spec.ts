import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, firstLine, runTypeScript } from '@lib/shared/testing/processes';
import { describeEventStoreContract } from '@lib/event-store/testing/event-store.contract';
import { RecordedEvent } from './event-store.port';
import { SqliteEventStore } from './sqlite-event-store';

describeEventStoreContract('SqliteEventStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'event-store-'));
  // A small batch makes catch-up cross several pages.
  const store = new SqliteEventStore({ file: join(dir, 'events.db'), batchSize: 2, pollIntervalMs: 20, retryDelayMs: 10 });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SqliteEventStore on a file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'event-store-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps its events when closed and reopened, and continues the same order', async () => {
    const file = join(dir, 'nested', 'events.db');
    const first = new SqliteEventStore({ file, now: () => 1_767_225_600_000 });
    const created = await first.appendToStream('quote-1', [{ type: 'quote.v1.created', data: { total: '120.00' } }], 'no_stream');
    await first.close();

    const reopened = new SqliteEventStore({ file });
    const [event] = await reopened.readStream('quote-1');
    expect(event).toMatchObject({ type: 'quote.v1.created', data: { total: '120.00' }, revision: 0, recordedAt: 1_767_225_600_000 });
    const revised = await reopened.appendToStream('quote-1', [{ type: 'quote.v1.revised', data: {} }], 0);
    expect(revised.position).toBeGreaterThan(created.position);
    await reopened.close();
  });

  it('loses nothing acknowledged when the writing process is killed right after the append', async () => {
    const file = join(dir, 'events.db');
    const child = runTypeScript(`
      const { SqliteEventStore } = require(${JSON.stringify(require.resolve('./sqlite-event-store'))});
      const store = new SqliteEventStore({ file: ${JSON.stringify(file)} });
      store.appendToStream('quote-1', [{ type: 'quote.v1.created', data: { n: 1 } }], 'no_stream')
        .then((result) => console.log('appended ' + result.position));
      setInterval(() => undefined, 1000);
    `);
    await firstLine(child);
    child.kill('SIGKILL');
    await exited(child);

    const store = new SqliteEventStore({ file });
    expect(await store.readStream('quote-1')).toHaveLength(1);
    await store.close();
  });

  it('loses none of many concurrent appends acknowledged together when the process is killed', async () => {
    const file = join(dir, 'events.db');
    const child = runTypeScript(`
      const { SqliteEventStore } = require(${JSON.stringify(require.resolve('./sqlite-event-store'))});
      const store = new SqliteEventStore({ file: ${JSON.stringify(file)} });
      Promise.all(Array.from({ length: 50 }, (_, n) => store.appendToStream('lead-' + n, [{ type: 'lead.v1.noted', data: { n } }], 'no_stream')))
        .then((results) => console.log('appended ' + results.length));
      setInterval(() => undefined, 1000);
    `);
    expect(await firstLine(child)).toBe('appended 50');
    child.kill('SIGKILL');
    await exited(child);

    const store = new SqliteEventStore({ file });
    expect(await store.readAll({ after: 0, maxCount: 100 })).toHaveLength(50);
    await store.close();
  });

  it('a live subscription picks up appends made by another process sharing the file', async () => {
    const file = join(dir, 'events.db');
    const store = new SqliteEventStore({ file, pollIntervalMs: 20 });
    const handled: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({ after: 0, handler: async (event) => void handled.push(event) });

    const child = runTypeScript(`
      const { SqliteEventStore } = require(${JSON.stringify(require.resolve('./sqlite-event-store'))});
      const store = new SqliteEventStore({ file: ${JSON.stringify(file)} });
      (async () => {
        for (let n = 0; n < 3; n++) await store.appendToStream('lead-1', [{ type: 'lead.v1.noted', data: { n } }], n === 0 ? 'no_stream' : n - 1);
        await store.close();
      })();
    `);
    await exited(child);
    const deadline = Date.now() + 5_000;
    while (handled.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    await subscription.stop();
    await store.close();

    expect(handled.map((e) => e.data)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
  });
});
