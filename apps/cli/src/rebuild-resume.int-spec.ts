import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { checkpointName, pointerId, readPointers } from '@lib/event-sourcing';
import { quotesProjection } from '@lib/quotes';
import { SqliteReadStore } from '@lib/read-store';
import { TYPESCRIPT_PRELUDE } from '@lib/shared/testing/processes';
import { generatedDataDir } from './testing/generated-data-dir';
import { runCli } from './testing/run-cli';

const ROOT = resolve(__dirname, '../../..');

/** The CLI in a child process that compiles this repository's TypeScript as it requires it. */
function cliChild(dataDir: string, argv: string[]): ChildProcess {
  const script = `${TYPESCRIPT_PRELUDE}
    require(${JSON.stringify(join(ROOT, 'apps/cli/src/main.ts'))}).run(${JSON.stringify(argv)}, { out: process.stdout, err: process.stderr }).then((code) => { process.exitCode = code; });
  `;
  return spawn(process.execPath, ['-e', script], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
}

const cli = (dataDir: string, ...argv: string[]) => runCli({ DATA_DIR: dataDir }, argv);

describe('projections:rebuild killed with SIGKILL and run again', () => {
  let dataDir: string;
  let head: number;

  beforeAll(async () => {
    ({ dataDir, head } = await generatedDataDir('rebuild-resume-', 30_000));
  }, 120_000);

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('continues from the checkpoint of the killed run, and only the finished rebuild goes live', async () => {
    const target = checkpointName({ ...quotesProjection, generation: 1 });
    const reads = new SqliteReadStore({ file: join(dataDir, 'read-models.db') });
    const child = cliChild(dataDir, ['projections:rebuild', 'quotes', '--batch-size', '500', '--switch-grace-ms', '1500']);
    let childOutput = '';
    child.stderr!.on('data', (chunk) => (childOutput += chunk));
    const exited = new Promise<NodeJS.Signals | number | null>((done) => child.once('exit', (code, signal) => done(signal ?? code)));
    let killedAt = 0;
    for (let waited = 0; waited < 60_000 && killedAt === 0; waited += 20) {
      const position = (await reads.getCheckpoint(target)) ?? 0;
      if (position > 0) {
        child.kill('SIGKILL');
        killedAt = position;
      } else {
        await new Promise((done) => setTimeout(done, 20));
      }
    }
    expect(await exited).toBe('SIGKILL');
    expect(killedAt).toBeGreaterThan(0);
    const stoppedAt = (await reads.getCheckpoint(target))!;
    expect(stoppedAt).toBeGreaterThanOrEqual(killedAt);
    expect(stoppedAt).toBeLessThan(head);
    // Killed before its switch: generation 0 is still the live one, the rebuild shows as unfinished, not running (its process is gone).
    expect((await readPointers(reads)).get(pointerId(quotesProjection))).toBeUndefined();
    const status = JSON.parse((await cli(dataDir, 'projections:status', '--json')).out);
    expect(status.projections.find((p: any) => p.name === 'quotes')).toMatchObject({ generation: 0, rebuild: { generation: 1, checkpoint: stoppedAt }, running: null });
    await reads.close();

    const resumed = await cli(dataDir, 'projections:rebuild', 'quotes', '--switch-grace-ms', '1500');
    expect(resumed.code).toBe(0);
    expect(resumed.out).toContain(`resumed from position ${stoppedAt}`);
    expect(resumed.out).toContain('quotes v3: generation 0 → 1');

    const after = JSON.parse((await cli(dataDir, 'projections:status', '--json')).out);
    expect(after.projections.find((p: any) => p.name === 'quotes')).toMatchObject({ generation: 1, checkpoint: head, lag: 0, rebuild: null });
    // The resumed build is the same as a replay: every quote the kill interrupted included.
    const check = new SqliteReadStore({ file: join(dataDir, 'read-models.db') });
    expect(await check.count('quotes_v3_g1')).toBe(Math.ceil(30_000 / 7));
    await check.close();
    for (const index of [0, 1_000, 2_000, 4_000]) {
      const audit = await cli(dataDir, 'audit:quote', `quo_gen${String(index).padStart(8, '0')}`);
      expect([audit.code, audit.out]).toEqual([0, expect.stringContaining('ok:')]);
    }
    expect(childOutput).not.toContain('failed');
  }, 120_000);
});

describe('projections:rebuild while another rebuild runs', () => {
  let dataDir: string;

  beforeAll(async () => {
    ({ dataDir } = await generatedDataDir('rebuild-lease-', 30_000));
  }, 120_000);

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is refused naming the running one, which status shows as running, and the running one switches once', async () => {
    const target = checkpointName({ ...quotesProjection, generation: 1 });
    const reads = new SqliteReadStore({ file: join(dataDir, 'read-models.db') });
    const child = cliChild(dataDir, ['projections:rebuild', '--all', '--batch-size', '20']);
    let childOut = '';
    child.stdout!.on('data', (chunk) => (childOut += chunk));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    for (let waited = 0; waited < 60_000 && ((await reads.getCheckpoint(target)) ?? 0) === 0; waited += 20) await new Promise((done) => setTimeout(done, 20));
    await reads.close();

    const status = await cli(dataDir, 'projections:status');
    const quotesRow = status.out.split('\n').find((row) => row.startsWith('quotes '));
    expect(quotesRow).toMatch(new RegExp(`g1 at \\d+ running \\(pid ${child.pid} on ${hostname()}\\)$`));
    expect(status.out).not.toContain('unfinished');
    const json = JSON.parse((await cli(dataDir, 'projections:status', '--json')).out);
    expect(json.projections.find((p: any) => p.name === 'quotes')).toMatchObject({ generation: 0, running: { pid: child.pid, host: hostname() } });

    const second = await cli(dataDir, 'projections:rebuild', '--all');
    expect([second.code, second.out]).toEqual([1, '']);
    expect(second.err).toContain(`projections:rebuild failed: another rebuild is running (pid ${child.pid} on ${hostname()}, since `);

    expect(await exited).toBe(0);
    expect(childOut).not.toContain('resumed from');
    expect(childOut).toContain('quotes v3: generation 0 → 1');
    const after = JSON.parse((await cli(dataDir, 'projections:status', '--json')).out);
    expect(after.projections.find((p: any) => p.name === 'quotes')).toMatchObject({ generation: 1, lag: 0, rebuild: null, running: null });
    // the refused rebuild started nothing: no generation 2 was begun
    const check = new SqliteReadStore({ file: join(dataDir, 'read-models.db') });
    expect(await check.getCheckpoint(checkpointName({ ...quotesProjection, generation: 2 }))).toBeNull();
    await check.close();
  }, 120_000);
});
