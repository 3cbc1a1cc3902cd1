import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadStore } from '@lib/read-store';
import { processOwner, SystemClock } from '@lib/shared';
import { afterAttempt, JobRunner, JobStore, newJob, type JobOutcome, type JobRecord } from './job-queue';

interface TestJob extends JobRecord {
  payload: string;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(probe: () => Promise<T | null>): Promise<T> {
  for (let waited = 0; waited < 5_000; waited += 10) {
    const value = await probe();
    if (value) return value;
    await pause(10);
  }
  throw new Error('timed out');
}

describe('afterAttempt', () => {
  const schedule = [0, 100, 1_000];
  const job = (): TestJob => ({ ...newJob('j1', 0, schedule), payload: 'x' });

  it('given a failed attempt with retries left, then it is pending again after the next delay, its error kept', () => {
    expect(afterAttempt(job(), { kind: 'retry', error: 'boom' }, 50, schedule)).toMatchObject({ status: 'pending', attempts: 1, lastError: 'boom', scheduledFor: 150 });
  });

  it('given the last attempt fails, then the job is failed with its error', () => {
    const last = { ...job(), attempts: 2 };
    expect(afterAttempt(last, { kind: 'retry', error: 'boom' }, 50, schedule)).toMatchObject({ status: 'failed', attempts: 3, lastError: 'boom' });
  });

  it('given a wait, then no attempt is counted and the job looks again at the given time', () => {
    expect(afterAttempt(job(), { kind: 'wait', until: 500, note: 'waiting for the PDF' }, 50, schedule)).toMatchObject({ status: 'pending', attempts: 0, scheduledFor: 500, lastError: 'waiting for the PDF' });
  });
});

describe('JobRunner on the SQLite read store', () => {
  let dir: string;
  let reads: SqliteReadStore;
  let store: JobStore<TestJob>;
  let runner: JobRunner<TestJob> | null = null;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'jobs-'));
    reads = new SqliteReadStore({ file: join(dir, 'read.db') });
    store = new JobStore<TestJob>(reads, 'test_jobs_v1');
    await store.ensureIndexes();
  });
  afterEach(async () => {
    await runner?.stop();
    runner = null;
    await reads.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (schedule: number[], attempt: (job: TestJob) => Promise<JobOutcome<TestJob>>) => {
    runner = new JobRunner({ name: 'test', store, attempt, schedule, clock: new SystemClock(), pollIntervalMs: 50 });
    runner.start();
  };

  it('given an attempt that throws twice, then the job is retried on its schedule and done on the third attempt', async () => {
    const schedule = [0, 20, 20];
    let calls = 0;
    start(schedule, async () => {
      calls++;
      if (calls < 3) throw new Error(`failure ${calls}`);
      return { kind: 'done', changes: { payload: 'made' } };
    });
    expect(await store.create({ ...newJob('j1', Date.now(), schedule), payload: 'x' })).toBe(true);
    runner!.wake();
    const done = await until(async () => ((await store.get('j1'))?.status === 'done' ? store.get('j1') : null));
    expect(done).toMatchObject({ attempts: 3, lastError: null, payload: 'made', leaseUntil: null });
    expect(calls).toBe(3);
  });

  it('given an attempt that always fails, then the job ends failed with the last error and is not attempted again', async () => {
    const schedule = [0, 10];
    let calls = 0;
    start(schedule, async () => {
      calls++;
      return { kind: 'retry', error: `refused ${calls}` };
    });
    await store.create({ ...newJob('j2', Date.now(), schedule), payload: 'x' });
    runner!.wake();
    const failed = await until(async () => ((await store.get('j2'))?.status === 'failed' ? store.get('j2') : null));
    expect(failed).toMatchObject({ attempts: 2, lastError: 'refused 2' });
    await pause(120);
    expect(calls).toBe(2);
  });

  it('given a job left working by a crashed process, then it is attempted again once its lease is over', async () => {
    const now = Date.now();
    await store.create({ ...newJob('j3', now, [0]), status: 'working', leaseUntil: now - 1, payload: 'x' });
    start([0], async () => ({ kind: 'done', changes: {} }));
    const done = await until(async () => ((await store.get('j3'))?.status === 'done' ? store.get('j3') : null));
    expect(done.attempts).toBe(1);
  });

  it('given a job left working by a process of this host that is gone, then it is attempted again at once, not when its lease is over', async () => {
    const now = Date.now();
    const gone = processOwner(); // a predecessor with this pid (a restarted container): its owner no longer used
    gone.release();
    await store.create({ ...newJob('j5', now, [0]), status: 'working', leaseUntil: now + 3_600_000, leaseOwner: gone.id, payload: 'x' });
    const alive = processOwner();
    await store.create({ ...newJob('j6', now, [0]), status: 'working', leaseUntil: now + 3_600_000, leaseOwner: alive.id, payload: 'x' });
    start([0], async () => ({ kind: 'done', changes: {} }));
    expect(await until(async () => ((await store.get('j5'))?.status === 'done' ? store.get('j5') : null))).toMatchObject({ attempts: 1, leaseOwner: null });
    expect((await store.get('j6'))?.status).toBe('working');
    alive.release();
  });

  it('given a job left working by a process of this host in another PID namespace (a restarted container), then the first look after start makes it again', async () => {
    const now = Date.now();
    const ownNamespace = processOwner();
    ownNamespace.release();
    const [host, namespace] = ownNamespace.id.split('/');
    await store.create({ ...newJob('j7', now, [0]), status: 'working', leaseUntil: now + 3_600_000, leaseOwner: `${host}/1${namespace}/1/123e4567-e89b-42d3-a456-426614174000`, payload: 'x' });
    start([0], async () => ({ kind: 'done', changes: {} }));
    expect(await until(async () => ((await store.get('j7'))?.status === 'done' ? store.get('j7') : null))).toMatchObject({ attempts: 1 });
  });

  it('given the same id twice, then create makes one record', async () => {
    expect(await store.create({ ...newJob('j4', 0, [0]), payload: 'first' })).toBe(true);
    expect(await store.create({ ...newJob('j4', 0, [0]), payload: 'second' })).toBe(false);
    expect((await store.get('j4'))?.payload).toBe('first');
  });
});
