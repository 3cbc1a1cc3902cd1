import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { TYPESCRIPT_PRELUDE } from '@lib/shared/testing/processes';
import { freePort } from './support/product-process';

const ROOT = join(__dirname, '..');

/** Runs an app's main file from the sources until it exits (killed after 30 s: a hang is a failure too). */
function runToExit(mainFile: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  // Embedded, also where the suite runs on the real engines: what is checked is the configuration, not the engines.
  const { EVENTSTORE_URL: _e, MONGODB_URL: _m, KAFKA_BROKERS: _k, ...inherited } = process.env;
  const child = spawn(process.execPath, ['-e', `${TYPESCRIPT_PRELUDE}\nrequire(${JSON.stringify(join(ROOT, mainFile))});`], {
    env: { ...inherited, HOST: '127.0.0.1', SEED_DEMO: 'false', LOG_LEVEL: 'silent', ADMIN_TOKEN: 'adm_start_up_errors_test_0123456789', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const hang = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(hang);
      resolve({ code, stderr });
    }),
  );
}

/**
 * How this process can make a file it may not write: its mode for a user, the immutable attribute
 * for root (whom modes do not stop), tried once on a scratch file; null when neither works here
 * (then the test that needs it is not run, rather than passing without looking).
 */
const UNWRITABLE = ((): 'mode' | 'immutable attribute' | null => {
  if (process.getuid?.() !== 0) return 'mode';
  const probe = join(mkdtempSync(join(tmpdir(), 'unwritable-')), 'probe');
  writeFileSync(probe, '');
  const works = spawnSync('chattr', ['+i', probe]).status === 0;
  if (works) spawnSync('chattr', ['-i', probe]);
  rmSync(dirname(probe), { recursive: true, force: true });
  return works ? 'immutable attribute' : null;
})();

/** Makes `file` unwritable the way UNWRITABLE names; returns what makes it writable again. */
function makeUnwritable(how: 'mode' | 'immutable attribute', file: string): () => void {
  if (how === 'mode') {
    chmodSync(file, 0o444);
    return () => chmodSync(file, 0o644);
  }
  spawnSync('chattr', ['+i', file]);
  return () => spawnSync('chattr', ['-i', file]);
}

/** Decisions §1: bad configuration fails start-up with one clear line naming the variable — also what only listen() or mkdir() find out. */
describe('start-up with a HOST, port or DATA_DIR that cannot be used', () => {
  let parent: string;
  let busy: Server;
  let busyPort: number;

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), 'start-up-errors-'));
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => busy.close(resolve));
    rmSync(parent, { recursive: true, force: true });
  });

  const dataDir = () => mkdtempSync(join(parent, 'data-'));

  it('names HOST when the gateway cannot resolve it', async () => {
    const { code, stderr } = await runToExit('apps/api-gateway/src/main.ts', { DATA_DIR: dataDir(), PORT: String(await freePort()), HOST: '999.1.1.1' });
    expect(code).toBe(1);
    // EAI_AGAIN where no resolver answers
    expect(stderr).toMatch(/^Invalid configuration: HOST cannot be listened on \(getaddrinfo (ENOTFOUND|EAI_AGAIN) 999\.1\.1\.1\)\n$/);
  }, 40_000);

  it('names PORT when the gateway finds its port taken', async () => {
    const { code, stderr } = await runToExit('apps/api-gateway/src/main.ts', { DATA_DIR: dataDir(), PORT: String(busyPort) });
    expect({ code, stderr }).toEqual({ code: 1, stderr: `Invalid configuration: PORT cannot be listened on (listen EADDRINUSE: address already in use 127.0.0.1:${busyPort})\n` });
  }, 40_000);

  it('names OPS_PORT when a standalone projector finds its operations port taken', async () => {
    const { code, stderr } = await runToExit('apps/projector/src/main.ts', { DATA_DIR: dataDir(), OPS_PORT: String(busyPort) });
    expect({ code, stderr }).toEqual({ code: 1, stderr: `Invalid configuration: OPS_PORT cannot be listened on (listen EADDRINUSE: address already in use 127.0.0.1:${busyPort})\n` });
  }, 40_000);

  it('names DATA_DIR when it is a file, or lies under one', async () => {
    const file = join(parent, 'a-file');
    writeFileSync(file, '');
    expect(await runToExit('apps/api-gateway/src/main.ts', { DATA_DIR: file, PORT: String(await freePort()) })).toEqual({
      code: 1,
      stderr: `Invalid configuration: DATA_DIR (${file}) is not a directory\n`,
    });
    expect(await runToExit('apps/outbox/src/main.ts', { DATA_DIR: join(file, 'data') })).toEqual({
      code: 1,
      stderr: `Invalid configuration: DATA_DIR (${join(file, 'data')}) cannot be created: ${file} is not a directory\n`,
    });
  }, 60_000);

  (UNWRITABLE ? it : it.skip)(`names DATA_DIR and the store file it cannot write, instead of serving with every write refused (${UNWRITABLE ?? 'no way to make a file unwritable here'})`, async () => {
    const dir = dataDir();
    const events = join(dir, 'events.db');
    writeFileSync(events, '');
    const writable = makeUnwritable(UNWRITABLE ?? 'mode', events);
    try {
      const { code, stderr } = await runToExit('apps/api-gateway/src/main.ts', { DATA_DIR: dir, PORT: String(await freePort()) });
      expect({ code, stderr }).toEqual({
        code: 1,
        stderr: expect.stringMatching(new RegExp(`^Invalid configuration: DATA_DIR \\(${dir}\\) cannot be written: ${events} is not writable by this process \\((EACCES|EPERM)\\); check its owner, its mode and its attributes \\(lsattr\\)\\n$`)),
      });
    } finally {
      writable();
    }
  }, 40_000);

  // Node's recursive mkdir loops at 100 % CPU there; the product must not.
  (existsSync('/proc/self') ? it : it.skip)('names DATA_DIR when it cannot be created under /proc, instead of hanging', async () => {
    const { code, stderr } = await runToExit('apps/api-gateway/src/main.ts', { DATA_DIR: '/proc/nope/data', PORT: String(await freePort()) });
    expect({ code, stderr }).toEqual({ code: 1, stderr: "Invalid configuration: DATA_DIR (/proc/nope/data) cannot be created: ENOENT: no such file or directory, mkdir '/proc/nope'\n" });
  }, 40_000);
});
