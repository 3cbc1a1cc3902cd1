import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { QUOTE_VERSIONS } from '@lib/quotes';
import { RELAY_CHECKPOINT } from '@lib/runtime/relay';
import { openReadStore } from '@lib/runtime/stores';
import { loadConfig } from '@lib/shared';
import { TYPESCRIPT_PRELUDE } from '@lib/shared/testing/processes';
import { run } from './main';
import { generatedDataDir } from './testing/generated-data-dir';
import { runCli, withEnv } from './testing/run-cli';

const ROOT = resolve(__dirname, '../../..');
const ORG = 'org_gen0';
const QUOTE = 'quo_gen00000000';

/** The embedded stores of `dataDir`, whatever engines the environment names. */
const EMBEDDED = (dataDir: string) => ({ DATA_DIR: dataDir, EVENTSTORE_URL: undefined, MONGODB_URL: undefined });
const cli = (dataDir: string, ...argv: string[]) => runCli(EMBEDDED(dataDir), argv);

/** The live generation, checkpoint and lag of the quotes projection. */
async function quotesStatus(dataDir: string): Promise<{ version: number; generation: number; checkpoint: number; lag: number; ahead: number }> {
  const { out } = await cli(dataDir, 'projections:status', '--json');
  return JSON.parse(out).projections.find((p: { name: string }) => p.name === 'quotes');
}

describe('projections:status of a read store ahead of its event log', () => {
  it('shows how far a checkpoint is past the head, and warns', async () => {
    const { dataDir, head } = await generatedDataDir('cli-ahead-', 20);
    try {
      const { version } = await quotesStatus(dataDir);
      const reads = await openReadStore(loadConfig({ DATA_DIR: dataDir }));
      await reads.saveCheckpoint(`projection:quotes:v${version}`, head + 5);
      await reads.close();
      expect(await quotesStatus(dataDir)).toMatchObject({ checkpoint: head + 5, lag: 0, ahead: 5 });
      const { code, out, err } = await cli(dataDir, 'projections:status');
      expect(code).toBe(0);
      expect(out).toMatch(new RegExp(`^quotes +${version} +0 +${head + 5} +ahead by 5 +-$`, 'm'));
      expect(err).toMatch(/^warning: quotes is past the head of the event log: the read store does not belong to this log/m);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the CLI on an embedded store', () => {
  let dataDir: string;

  beforeAll(async () => {
    ({ dataDir } = await generatedDataDir('cli-', 700));
    expect((await cli(dataDir, 'projections:rebuild', 'quotes', '--switch-grace-ms', '1500')).code).toBe(0);
  }, 60_000);

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  describe('projections:rebuild options', () => {
    it.each([
      ['--batch-size', '0'],
      ['--batch-size', '-1'],
      ['--batch-size', '1.5'],
      ['--batch-size', '1e3'],
      ['--batch-size', ''],
      ['--batch-size', ' 5'],
      ['--switch-grace-ms', '-1'],
      ['--switch-grace-ms', 'soon'],
      ['--switch-grace-ms', '0x10'],
      ['--switch-grace-ms', ''],
      ['--switch-grace-ms', '0'],
      ['--switch-grace-ms', '1499'],
    ])('given %s %j, then it exits 2 naming the option, and the live generation stays', async (option, value) => {
      const before = await quotesStatus(dataDir);
      const { code, out, err } = await cli(dataDir, 'projections:rebuild', 'quotes', `${option}=${value}`);
      expect([code, out]).toEqual([2, '']);
      expect(err).toContain(`${option} must be a whole number, ${option === '--batch-size' ? '1 to 10000' : '1500 or more'}`);
      expect(err).toContain(`; got ${JSON.stringify(value)}`);
      expect(await quotesStatus(dataDir)).toEqual(before);
      expect(before).toMatchObject({ generation: 1, lag: 0 });
    });

    it('given a grace period shorter than readers take to leave the old generation, then the message names the minimum and why', async () => {
      const { code, err } = await cli(dataDir, 'projections:rebuild', '--all', '--switch-grace-ms', '0');
      expect(code).toBe(2);
      expect(err).toContain(
        '--switch-grace-ms must be a whole number, 1500 or more (the old generation is dropped after it, and gateways may still read it up to 1250 ms after the switch); got "0"',
      );
    });
  });

  describe('outbox:skip-to-head', () => {
    it('given no relay checkpoint (read models lost), then it moves the relay to the head once; given one past the head (a read store from a later moment), back to the head', async () => {
      const reads = await openReadStore(loadConfig(EMBEDDED(dataDir)));
      const head = JSON.parse((await cli(dataDir, 'projections:status', '--json')).out).head;
      try {
        expect(await reads.getCheckpoint(RELAY_CHECKPOINT)).toBeNull();
        const first = await cli(dataDir, 'outbox:skip-to-head');
        expect([first.code, first.out]).toEqual([0, `relay checkpoint unset (from the start) → ${head}: the outbox relays only events after position ${head}\n`]);
        expect(await reads.getCheckpoint(RELAY_CHECKPOINT)).toBe(head);

        const again = await cli(dataDir, 'outbox:skip-to-head');
        expect([again.code, again.out]).toEqual([0, `the relay is at position ${head}, the head of the log: nothing to skip\n`]);
        // Past the head, the relay would skip the next events this log stores: they take those positions.
        await reads.saveCheckpoint(RELAY_CHECKPOINT, head + 5);
        const ahead = await cli(dataDir, 'outbox:skip-to-head');
        expect([ahead.code, ahead.out]).toEqual([0, `relay checkpoint ${head + 5} → ${head}: it was past the head of the log (the read store is from a later moment than the log); the outbox relays the events stored after position ${head}\n`]);
        expect(await reads.getCheckpoint(RELAY_CHECKPOINT)).toBe(head);
      } finally {
        await reads.saveCheckpoint(RELAY_CHECKPOINT, 0);
        await reads.close();
      }
    });

    it('given an argument, then it exits 2', async () => {
      expect((await cli(dataDir, 'outbox:skip-to-head', 'now')).code).toBe(2);
    });

    it('given another process holding the read store\'s write lock throughout the wait, then it exits 1 saying what "database is locked" means', async () => {
      // a connection of its own, in the middle of a write, as a process stopped there holds it
      const holder = new Database(join(dataDir, 'read-models.db'));
      holder.exec('BEGIN IMMEDIATE');
      try {
        const { code, err } = await cli(dataDir, 'outbox:skip-to-head');
        expect(code).toBe(1);
        expect(err).toMatch(/^outbox:skip-to-head failed: database is locked \(another process held the store's write lock throughout the wait: one stopped in the middle of a write holds it until it goes on or ends; projections:status names a running rebuild/);
      } finally {
        holder.exec('ROLLBACK');
        holder.close();
      }
    }, 30_000);
  });

  describe('audit:quote', () => {
    it('given a stored version snapshot without its line items, then it exits 1 and names the missing field', async () => {
      const reads = await openReadStore(loadConfig({ DATA_DIR: dataDir }));
      const [stored] = (await reads.find<{ id: string; seq: number; snapshot: Record<string, unknown> }>(QUOTE_VERSIONS, { filter: { quoteId: QUOTE }, sort: [{ field: 'seq', direction: 'desc' }], limit: 1 })).items;
      const { lineItems: _removed, ...snapshot } = stored.snapshot;
      await reads.upsert([{ collection: QUOTE_VERSIONS, document: { ...stored, snapshot } }]);
      try {
        const { code, out } = await cli(dataDir, 'audit:quote', QUOTE);
        expect(code).toBe(1);
        expect(out).toContain('MISMATCH');
        // the newest of the generated quote's three history entries (created, replaced, revised)
        expect(out).toMatch(/version 2 \(entry 3\)\.snapshot\.lineItems: replay \[.+, stored \(missing\)/);
      } finally {
        await reads.upsert([{ collection: QUOTE_VERSIONS, document: stored }]);
        await reads.close();
      }
      expect((await cli(dataDir, 'audit:quote', QUOTE)).code).toBe(0);
    });
  });

  describe('audit:export --from / --to', () => {
    it.each([
      ['--from', '2026-02-30'],
      ['--from', '12'],
      ['--to', '2026-11-26 08:19:30'],
      ['--to', 'Nov 26 2026 08:19:30'],
    ])('given %s %j, then it exits 2 naming the option and the forms it takes, and exports nothing', async (option, value) => {
      const { code, out, err } = await cli(dataDir, 'audit:export', '--org', ORG, option, value);
      expect([code, out]).toEqual([2, '']);
      expect(err).toContain(`${option} must be YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS[.sss]] (UTC, unless it ends in Z or ±HH:MM) or Unix ms (five digits or more); got ${JSON.stringify(value)}`);
    });
  });

  describe('audit:export of an organization', () => {
    it('given an organization id the log does not know, then it exits 1 naming it, and writes nothing', async () => {
      const out = join(dataDir, 'unknown-org.ndjson');
      const { code, err } = await cli(dataDir, 'audit:export', '--org', 'org_unknown', '--out', out);
      expect([code, err]).toEqual([1, 'unknown organization org_unknown: the event log has no such organization\n']);
      expect(existsSync(out)).toBe(false);
      const toStdout = await cli(dataDir, 'audit:export', '--org', 'org_unknown');
      expect([toStdout.code, toStdout.out]).toEqual([1, '']);
    });

    it('given --out, then the file is readable by its owner only, and an existing file is not written over', async () => {
      const out = join(dataDir, 'export.ndjson');
      expect((await cli(dataDir, 'audit:export', '--org', ORG, '--out', out)).code).toBe(0);
      expect(statSync(out).mode & 0o777).toBe(0o600);
      const written = readFileSync(out, 'utf8');
      expect(written.split('\n').length).toBeGreaterThan(1);
      const again = await cli(dataDir, 'audit:export', '--org', ORG, '--out', out);
      expect([again.code, again.err]).toEqual([2, expect.stringContaining(`--out ${JSON.stringify(out)} exists: name a new file, or remove that one first`)]);
      expect(readFileSync(out, 'utf8')).toBe(written);
      rmSync(out);
    });

    it('given an organization with no events in the range, then it exits 0 and exports none', async () => {
      const { code, out, err } = await cli(dataDir, 'audit:export', '--org', ORG, '--from', '2100-01-01');
      expect([code, out, err]).toEqual([0, '', `exported 0 events of organization ${ORG}, stored from 2100-01-01T00:00:00.000Z\n`]);
      // the range as it was read: Unix seconds taken for milliseconds show as January 1970
      const seconds = await cli(dataDir, 'audit:export', '--org', ORG, '--to', '1764201600');
      expect(seconds.err).toBe(`exported 0 events of organization ${ORG}, stored to 1970-01-21T10:03:21.600Z\n`);
    });

    it('given --out, then the file is written under <file>.partial and named once whole; a partial file left by a stopped run is refused, not written over', async () => {
      const out = join(dataDir, 'whole.ndjson');
      writeFileSync(`${out}.partial`, '{"left":"by a stopped export"}\n');
      const refused = await cli(dataDir, 'audit:export', '--org', ORG, '--out', out);
      expect([refused.code, refused.err.split('\n')[0]]).toEqual([2, `${JSON.stringify(`${out}.partial`)} exists: an export to ${JSON.stringify(out)} stopped before it was whole; remove it first`]);
      expect(readFileSync(`${out}.partial`, 'utf8')).toContain('stopped export');
      rmSync(`${out}.partial`);
      expect((await cli(dataDir, 'audit:export', '--org', ORG, '--out', out)).code).toBe(0);
      expect(existsSync(`${out}.partial`)).toBe(false);
      expect(readFileSync(out, 'utf8').split('\n')[0]).toMatch(/^\{"id":/);
      expect(statSync(out).mode & 0o777).toBe(0o600);
      rmSync(out);
      // a symbolic link to nothing is a name taken too
      symlinkSync(join(dataDir, 'nowhere'), out);
      expect((await cli(dataDir, 'audit:export', '--org', ORG, '--out', out)).code).toBe(2);
      rmSync(out);
    });

    it.each([[''], ['-']])('given --out %j, which names no file, then it exits 2 and writes nothing anywhere', async (given) => {
      const { code, out, err } = await cli(dataDir, 'audit:export', '--org', ORG, '--out', given);
      expect([code, out, err.split('\n')[0]]).toEqual([2, '', `--out ${JSON.stringify(given)} names no file: leave --out out to write to stdout`]);
    });
  });

  describe('wrong usage', () => {
    it('given no command, then the usage goes to stderr with exit 2; asked for, to stdout with exit 0, also after a command', async () => {
      const none = await cli(dataDir);
      expect([none.code, none.out, none.err]).toEqual([2, '', expect.stringContaining('usage: quoting-cli <command>')]);
      for (const argv of [['help'], ['--help'], ['-h'], ['projections:list', '-h'], ['audit:export', '--org', ORG, '--help']]) {
        const asked = await cli(dataDir, ...argv);
        expect([argv, asked.code, asked.out, asked.err]).toEqual([argv, 0, expect.stringContaining('usage: quoting-cli <command>'), '']);
      }
      // `-h` as another option's value is no request for help
      const value = await cli(dataDir, 'audit:export', '--org', ORG, '--out', '-h');
      expect([value.code, value.out]).toEqual([2, '']);
      expect(value.err).toContain("argument is ambiguous");
    });

    it.each([
      [['projections:rebuild', 'quotes', '--all'], 'name the projections to rebuild or pass --all, not both'],
      [['projections:rebuild'], 'name the projections to rebuild, or pass --all'],
      [['projections:rebuild', 'quotes', 'contacts', 'quotes'], '"quotes" named more than once; name each projection once'],
      [['projections:rebuild', 'nope', 'nope'], expect.stringMatching(/^unknown projection "nope"; known: /)],
      [['projections:rebuild', 'quotes', '--batch-size', '10001'], '--batch-size must be a whole number, 1 to 10000 (a page of events and its documents are held in memory at once); got "10001"'],
    ])('given %j, then it exits 2 saying what is wrong, and rebuilds nothing', async (argv, message) => {
      const { code, out, err } = await cli(dataDir, ...argv);
      expect([code, out, err.split('\n')[0]]).toEqual([2, '', message]);
    });

    it.each([
      [['projections:status', 'extra']],
      [['projections:list', 'extra']],
      [['audit:export', '--org', ORG, 'extra']],
      [['audit:quote', QUOTE, 'extra']],
      [['outbox:skip-to-head', 'extra']],
    ])('given %j, an argument the command does not take, then it exits 2 naming it', async (argv) => {
      const { code, out, err } = await cli(dataDir, ...argv);
      expect([code, out]).toEqual([2, '']);
      expect(err).toMatch(/takes (no arguments; got "extra"|one quote id)/);
    });

    it.each([
      [['audit:export', '--org', ORG, '--from', '2026-01-01', '--from', '2026-02-01'], '--from'],
      [['audit:export', '--org', ORG, '--org', 'org_gen1'], '--org'],
      [['projections:rebuild', 'quotes', '--batch-size=10', '--batch-size', '20'], '--batch-size'],
      [['projections:status', '--json', '--json'], '--json'],
    ])('given %j, an option given twice, then it exits 2 naming it', async (argv, option) => {
      const { code, out, err } = await cli(dataDir, ...argv);
      expect([code, out]).toEqual([2, '']);
      expect(err).toContain(`${option} is given more than once; give it once`);
    });

    it.each([
      [['audit:quote', ''], 'audit:quote: the quote id is "": give the id without blanks around it'],
      [['audit:quote', `${QUOTE} `], `audit:quote: the quote id is "${QUOTE} ": give the id without blanks around it`],
      [['audit:export', '--org', ''], 'audit:export: --org is "": give the id without blanks around it'],
      [['audit:quote', QUOTE, '--all'], 'audit:quote does not take --all'],
      [['projections:status', '--org', ORG], 'projections:status does not take --org'],
      [['audit:export', '--org', ORG, '--json', '--batch-size', '5'], 'audit:export does not take --json, --batch-size'],
      [['backup', join(tmpdir(), 'never-written'), '--switch-grace-ms', '2000'], 'backup does not take --switch-grace-ms'],
    ])('given %j, an option the command does not take, then it exits 2 naming it and does nothing', async (argv, message) => {
      const { code, out, err } = await cli(dataDir, ...argv);
      expect([code, out]).toEqual([2, '']);
      expect(err.split('\n')[0]).toBe(message);
    });
  });

  describe('a reader that stops reading (`| head -1`)', () => {
    /** stdout of `quoting-cli … | head -1`: takes one write, then the reader is gone and the next write fails with EPIPE. */
    function headOne(): Writable & { taken: string[] } {
      const taken: string[] = [];
      const stream = new Writable({
        write(chunk, _encoding, done) {
          if (taken.length > 0) return done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32, syscall: 'write' }));
          taken.push(String(chunk));
          done();
        },
      });
      return Object.assign(stream, { taken });
    }

    /** Runs the CLI with stdout closed after its first write; stderr as text. */
    async function runToHeadOne(argv: string[]): Promise<{ code: number; taken: string[]; err: string }> {
      const out = headOne();
      let err = '';
      const errors = new Writable({ write: (chunk, _encoding, done) => void ((err += chunk), done()) });
      const code = await withEnv(EMBEDDED(dataDir), () => run(argv, { out, err: errors }));
      // what the stream emits after the last write (its 'error' event) comes in the next ticks
      await new Promise((done) => setImmediate(done));
      return { code, taken: out.taken, err };
    }

    it.each([
      [['projections:status'], 'NAME'],
      [['audit:quote', QUOTE], `quote ${QUOTE}:`],
      [['audit:export', '--org', ORG], '{"id":'],
    ])('given %j, then the command exits 0 quietly after the line the reader took', async (argv, first) => {
      const { code, taken, err } = await runToHeadOne(argv);
      expect(taken).toEqual([expect.stringContaining(first)]);
      expect(err).not.toMatch(/EPIPE|failed|exported/);
      expect(code).toBe(0);
    });

    it('given --help and a reader already gone (`--help | head -0`), then it exits 0 quietly', async () => {
      const gone = new Writable({ write: (_chunk, _encoding, done) => done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32, syscall: 'write' })) });
      const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
      const code = await run(['--help'], { out: gone, err: quiet });
      // the stream's 'error' event comes in the next ticks; unwatched, it would be an uncaught exception
      await new Promise((done) => setImmediate(done));
      expect(code).toBe(0);
    });

    it('given a rebuild, then it finishes its switch and exits 0 quietly', async () => {
      const before = await quotesStatus(dataDir);
      const { code, err } = await runToHeadOne(['projections:rebuild', 'quotes', '--switch-grace-ms', '1500']);
      expect(err).not.toMatch(/EPIPE|failed/);
      expect(code).toBe(0);
      expect(await quotesStatus(dataDir)).toMatchObject({ generation: before.generation + 1, lag: 0 });
    });

    it('given a real pipe its reader closed, then the CLI process exits 0 without a stack trace', async () => {
      const script = `${TYPESCRIPT_PRELUDE}
        require(${JSON.stringify(join(ROOT, 'apps/cli/src/main.ts'))}).run(['projections:status'], { out: process.stdout, err: process.stderr }).then((code) => { process.exitCode = code; });
      `;
      const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
      delete env.EVENTSTORE_URL;
      delete env.MONGODB_URL;
      const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      // Closed before the CLI writes its first line: every write it makes fails with EPIPE.
      child.stdout!.destroy();
      let stderr = '';
      child.stderr!.on('data', (chunk) => (stderr += chunk));
      const code = await new Promise((done) => child.once('exit', done));
      expect(stderr).toBe('');
      expect(code).toBe(0);
    }, 30_000);
  });
});

describe('audit:export to a real pipe whose reader stops early (`| head -1`)', () => {
  let dataDir: string;
  let head: number;

  beforeAll(async () => {
    // a log of several export pages, and far more of the organization's events than a pipe holds
    ({ dataDir, head } = await generatedDataDir('cli-export-', 25_000));
  }, 60_000);

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('given the reader closes the pipe after the first line, then the export stops reading the log and exits 0 quietly', async () => {
    // The CLI on process.stdout, as `quoting-cli audit:export … | head -1` runs it; fd 3 tells how far it read the log.
    const script = `${TYPESCRIPT_PRELUDE}
      const { SqliteEventStore } = require('@lib/event-store');
      const readAll = SqliteEventStore.prototype.readAll;
      let readTo = 0;
      SqliteEventStore.prototype.readAll = async function (...args) {
        const page = await readAll.apply(this, args);
        if (page.length > 0) readTo = page[page.length - 1].position;
        return page;
      };
      require(${JSON.stringify(join(ROOT, 'apps/cli/src/main.ts'))}).run(['audit:export', '--org', ${JSON.stringify(ORG)}], { out: process.stdout, err: process.stderr }).then((code) => {
        require('node:fs').writeSync(3, String(readTo));
        process.exitCode = code;
      });
    `;
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
    delete env.EVENTSTORE_URL;
    delete env.MONGODB_URL;
    const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    let first = '';
    child.stdout!.once('data', (chunk) => {
      first = String(chunk).split('\n')[0];
      child.stdout!.destroy();
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    let readTo = '';
    child.stdio[3]!.on('data', (chunk) => (readTo += chunk));
    const code = await new Promise((done) => child.once('close', done));
    expect(first).toMatch(/^\{"id":/);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(Number(readTo)).toBeGreaterThan(0);
    expect(Number(readTo)).toBeLessThan(head);
  }, 60_000);
});

describe('the CLI on a DATA_DIR that holds no store', () => {
  let parent: string;

  beforeEach(() => {
    parent = mkdtempSync(join(tmpdir(), 'cli-no-store-'));
  });
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  const commands = [['projections:list'], ['projections:status', '--json'], ['audit:quote', QUOTE], ['audit:export', '--org', ORG], ['projections:rebuild', '--all']];

  it.each(commands)('given a DATA_DIR that does not exist, when %s runs, then it exits 2 naming DATA_DIR and creates nothing', async (...argv) => {
    const dataDir = join(parent, 'mistyped');
    const { code, out, err } = await cli(dataDir, ...argv);
    expect([code, out]).toEqual([2, '']);
    expect(err).toBe(`Invalid configuration: DATA_DIR (${dataDir}) is not an existing directory: set DATA_DIR to the directory of the apps' stores (or EVENTSTORE_URL / MONGODB_URL to their engines)\n`);
    expect(existsSync(dataDir)).toBe(false);
  });

  it.each(commands)('given a DATA_DIR without an event log, when %s runs, then it exits 2 naming DATA_DIR and creates no store in it', async (...argv) => {
    const dataDir = join(parent, 'other');
    mkdirSync(dataDir);
    const { code, err } = await cli(dataDir, ...argv);
    expect(code).toBe(2);
    expect(err).toContain(`DATA_DIR (${dataDir}) holds no event log (events.db)`);
    expect(existsSync(join(dataDir, 'events.db'))).toBe(false);
    expect(existsSync(join(dataDir, 'read-models.db'))).toBe(false);
  });
});
