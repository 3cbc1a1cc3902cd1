import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { SqliteReadStore } from '@lib/read-store';
import { LEASE_RENEW_MS, LEASE_TTL_MS, readRebuildLease, REBUILD_LEASE, RebuildLease, RebuildRunning, type RebuildLeaseDocument } from './rebuild-lease';

const NOW = Date.UTC(2026, 10, 26, 12);

/** A lease as another rebuild wrote it. */
const leaseOf = (owner: Partial<RebuildLeaseDocument>): RebuildLeaseDocument => ({
  id: 'rebuild',
  term: 7,
  token: 'other-run',
  host: 'ops-host-2',
  pid: 4242,
  projections: ['quotes'],
  startedAt: NOW - 60_000,
  expiresAt: NOW + LEASE_TTL_MS,
  ...owner,
});

/** The pid of a process of this host that has exited. */
function goneProcess(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout);
}

describe('the rebuild lease', () => {
  let store: SqliteReadStore;

  beforeEach(() => {
    store = new SqliteReadStore({ file: ':memory:' });
  });
  afterEach(async () => {
    jest.useRealTimers();
    await store.close();
  });

  const stored = (lease: RebuildLeaseDocument) => store.upsert([{ collection: REBUILD_LEASE, document: lease }]);

  it('given no rebuild ran before, then a rebuild takes it, a second is refused, and after the release the next takes it', async () => {
    const first = await RebuildLease.acquire(store, ['quotes', 'contacts'], NOW);
    await expect(RebuildLease.acquire(store, ['quotes'], NOW)).rejects.toThrow(
      `another rebuild is running (pid ${process.pid} on ${hostname()}, since ${new Date(NOW).toISOString()}, rebuilding quotes, contacts)`,
    );
    await first.release();
    expect(await readRebuildLease(store)).toMatchObject({ expiresAt: 0 });
    await (await RebuildLease.acquire(store, ['quotes'])).release();
  });

  it('given a rebuild on another host renews its lease, then a rebuild is refused naming it, whatever projections it rebuilds', async () => {
    await stored(leaseOf({}));
    const refused = await RebuildLease.acquire(store, ['contacts'], NOW).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RebuildRunning);
    expect((refused as Error).message).toBe(
      'another rebuild is running (pid 4242 on ops-host-2, since 2026-11-26T11:59:00.000Z, rebuilding quotes); wait for it to finish. ' +
        `It renews its lease every 2 s: if it is gone, its lease lapses by ${new Date(NOW + LEASE_TTL_MS).toISOString()}`,
    );
  });

  it('given the lease of another host was not renewed in time, then a rebuild takes it over', async () => {
    await stored(leaseOf({ expiresAt: NOW }));
    const lease = await RebuildLease.acquire(store, ['quotes'], NOW);
    expect(await readRebuildLease(store)).toMatchObject({ host: hostname(), pid: process.pid, term: 8 });
    await lease.release();
  });

  it('given the lease of a rebuild of this host whose process is gone (kill -9), then a rebuild takes it over at once', async () => {
    await stored(leaseOf({ host: hostname(), pid: goneProcess() }));
    const lease = await RebuildLease.acquire(store, ['quotes'], NOW);
    expect(await readRebuildLease(store)).toMatchObject({ pid: process.pid });
    await lease.release();
  });

  it('given a rebuild stalled until its lease was taken over, then its next check stops it naming the other', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'performance'] });
    const lease = await RebuildLease.acquire(store, ['quotes']);
    const { term } = (await readRebuildLease(store))!;
    await stored(leaseOf({ term: term + 1 }));
    await jest.advanceTimersByTimeAsync(LEASE_RENEW_MS);
    expect(() => lease.check()).toThrow('the rebuild lease was taken over by another rebuild (pid 4242 on ops-host-2');
    await lease.release();
    // its release leaves the other's lease alone
    expect(await readRebuildLease(store)).toMatchObject({ token: 'other-run', term: term + 1 });
  });
});
