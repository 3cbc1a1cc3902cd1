#!/usr/bin/env node
import 'reflect-metadata';
import { existsSync, lstatSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MAX_HOLD_MS, POINTER_REFRESH_MS, type Projection } from '@lib/event-sourcing';
import { EMBEDDED_FILES, openEventStore, openReadStore } from '@lib/runtime/stores';
import { ConfigError, loadConfig, type AppConfig } from '@lib/shared';
import { backup, refuseEventStoreEngine } from './backup';
import { auditExport, auditQuoteCommand, EXIT, projectionStatus, rebuild, skipRelayToHead, type CliContext } from './commands';
import { watchOutput } from './output';
import { parseTimeRange } from './time-range';
import { UsageError } from './usage-error';

/**
 * The shortest grace period after which no reader still uses the old generation: a gateway sees
 * the switch within a pointer refresh, then may hold its reads on the old generation for
 * MAX_HOLD_MS; one refresh more covers reads already under way and the projector leaving it.
 * Shorter ones, with the product running, answered 401 for valid API keys, "no such table" and
 * stale reads after writes (a review, 2026-11-26). The library takes any period, for its tests.
 */
const MIN_SWITCH_GRACE_MS = MAX_HOLD_MS + 2 * POINTER_REFRESH_MS;
const SWITCH_GRACE_WHY = `the old generation is dropped after it, and gateways may still read it up to ${POINTER_REFRESH_MS + MAX_HOLD_MS} ms after the switch`;

const USAGE = `usage: quoting-cli <command> [options]   (npm run cli -- <command>)

  projections:list | projections:status [--json]
      every projection: name, version, live generation, checkpoint, lag behind the log
  projections:rebuild <name>… | --all [--batch-size N] [--switch-grace-ms MS]
      blue/green rebuild from the start of the log; run it again to continue a stopped one.
      The old generation is dropped MS after the switch (default 2000, at least ${MIN_SWITCH_GRACE_MS}: readers leave it)
  audit:quote <quoteId> [--json]
      every version of the quote from its stream; exits 1 when the read model differs from the replay
  audit:export --org <organizationId> [--from <ISO date|ms>] [--to <ISO date|ms>] [--out <file>]
      the organization's events as NDJSON (stdout unless --out)
  outbox:skip-to-head
      the outbox relays only events stored from now on (after restoring events.db alone; outbox stopped)
  backup <dir> [--json]
      copies the embedded stores in use as of one instant (the apps keep running), the keys and pdfs/ into a new <dir>;
      with MONGODB_URL set, mongodump its database first (not with EVENTSTORE_URL: exit 2)

Works on the stores the apps use: DATA_DIR (embedded), or the engines that EVENTSTORE_URL /
MONGODB_URL name. Exit codes: 0 ok, 1 failed (e.g. an audit mismatch), 2 wrong usage.
`;

/**
 * A whole-number option, at least `least`: decimal digits only, as Number() also reads '' as 0,
 * and ' 5', '1e3', '0x10' and '5.0' as numbers.
 */
function count(name: string, value: string | undefined, least: number, why?: string, most?: number): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  const range = most === undefined ? `${least} or more` : `${least} to ${most}`;
  if (!Number.isSafeInteger(n) || n < least || n > (most ?? n)) throw new UsageError(`--${name} must be a whole number, ${range}${why ? ` (${why})` : ''}; got ${JSON.stringify(value)}`);
  return n;
}

/** The largest page a rebuild takes: pages of 10,000 events peaked at 551 MB on the benchmark store (docs/benchmarks.md); one page of a whole 140,000-event store took 1.1 GB (a review). */
const MAX_BATCH_SIZE = 10_000;
const BATCH_SIZE_WHY = 'a page of events and its documents are held in memory at once';

/**
 * The embedded stores open a DATA_DIR that does not exist as a new, empty one: a mistyped
 * DATA_DIR would show a log of no events, an unknown quote, an empty export — or rebuild nothing
 * and switch to it. Every command works on stores the apps wrote, so it must find them.
 */
function requireDataDir(config: AppConfig): void {
  if (config.eventStoreUrl && config.mongodbUrl) return;
  const help = 'set DATA_DIR to the directory of the apps\' stores (or EVENTSTORE_URL / MONGODB_URL to their engines)';
  if (!statSync(config.dataDir, { throwIfNoEntry: false })?.isDirectory()) throw new ConfigError('DATA_DIR', `(${config.dataDir}) is not an existing directory: ${help}`);
  if (!config.eventStoreUrl && !existsSync(join(config.dataDir, EMBEDDED_FILES.eventStore))) {
    throw new ConfigError('DATA_DIR', `(${config.dataDir}) holds no event log (${EMBEDDED_FILES.eventStore}): ${help}`);
  }
}

type Command = (context: CliContext) => Promise<number>;
/** A command on the stores' files, not through the stores (backup): it opens none, since opening a store creates it when missing. */
type FileCommand = { onFiles: (config: AppConfig, context: Pick<CliContext, 'out' | 'err'>) => Promise<number> };

/** A command that takes no positional arguments: one given is a typo or a misplaced value, not something to ignore. */
function noArguments(command: string, positionals: string[]): void {
  if (positionals.length > 0) throw new UsageError(`${command} takes no arguments; got ${positionals.map((value) => JSON.stringify(value)).join(' ')}`);
}

/** Each option at most once: parseArgs keeps the last of `--from A --from B`, and the command would act on a guess. */
function onceEach(tokens: Array<{ kind: string; name?: string }>): void {
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name === undefined) continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once; give it once`);
    seen.add(token.name);
  }
}

/** The options each command reads: another one given to it is a mistake (`audit:quote q --all`), not something to ignore. */
const OPTIONS_OF: Record<string, readonly string[]> = {
  'projections:list': ['json'],
  'projections:status': ['json'],
  'projections:rebuild': ['all', 'batch-size', 'switch-grace-ms'],
  'audit:quote': ['json'],
  'audit:export': ['org', 'from', 'to', 'out'],
  'outbox:skip-to-head': [],
  backup: ['json'],
};

function onlyOptionsOf(command: string, tokens: Array<{ kind: string; name?: string }>): void {
  const allowed = OPTIONS_OF[command];
  if (!allowed) return;
  const other = [...new Set(tokens.filter((token) => token.kind === 'option' && token.name !== undefined && !allowed.includes(token.name)).map((token) => `--${token.name}`))];
  if (other.length > 0) throw new UsageError(`${command} does not take ${other.join(', ')}`);
}

/** Every option any command takes (OPTIONS_OF says which command takes which). */
const ARGUMENT_OPTIONS = {
  all: { type: 'boolean' },
  json: { type: 'boolean' },
  org: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  out: { type: 'string' },
  'batch-size': { type: 'string' },
  'switch-grace-ms': { type: 'string' },
} as const;

/** The command the arguments name, checked before any store is opened: wrong usage is told as such, whatever the stores. */
function commandOf(command: string, rest: string[]): Command | FileCommand {
  const { values, positionals, tokens } = parseArgs({
    args: rest,
    allowPositionals: true,
    tokens: true,
    options: ARGUMENT_OPTIONS,
  });
  onceEach(tokens);
  onlyOptionsOf(command, tokens);
  switch (command) {
    case 'projections:list':
    case 'projections:status':
      noArguments(command, positionals);
      return (context) => projectionStatus(context, values.json ?? false);
    case 'projections:rebuild': {
      const options = { batchSize: count('batch-size', values['batch-size'], 1, BATCH_SIZE_WHY, MAX_BATCH_SIZE), switchGraceMs: count('switch-grace-ms', values['switch-grace-ms'], MIN_SWITCH_GRACE_MS, SWITCH_GRACE_WHY) };
      checkRebuildNames(positionals, values.all ?? false);
      return (context) => rebuild(context, positionals, values.all ?? false, options);
    }
    case 'audit:quote':
      if (positionals.length !== 1) throw new UsageError('audit:quote takes one quote id');
      checkedId('audit:quote: the quote id', positionals[0]);
      return (context) => auditQuoteCommand(context, positionals[0], values.json ?? false);
    case 'audit:export': {
      if (values.org === undefined) throw new UsageError('audit:export needs --org <organizationId>');
      checkedId('audit:export: --org', values.org);
      noArguments(command, positionals);
      // The file holds customers' names and e-mail addresses: never written over, as backup never is.
      if (values.out === '' || values.out === '-') throw new UsageError(`--out ${JSON.stringify(values.out)} names no file: leave --out out to write to stdout`);
      // lstat: a symbolic link is a name taken too, also one to nothing.
      const taken = (path: string) => lstatSync(path, { throwIfNoEntry: false }) !== undefined;
      if (values.out !== undefined && taken(values.out)) throw new UsageError(`--out ${JSON.stringify(values.out)} exists: name a new file, or remove that one first`);
      if (values.out !== undefined && taken(`${values.out}.partial`)) {
        throw new UsageError(`${JSON.stringify(`${values.out}.partial`)} exists: an export to ${JSON.stringify(values.out)} stopped before it was whole; remove it first`);
      }
      const options = { organizationId: values.org, ...parseTimeRange(values), out: values.out };
      return (context) => auditExport(context, options);
    }
    case 'outbox:skip-to-head':
      noArguments(command, positionals);
      return (context) => skipRelayToHead(context);
    case 'backup':
      if (positionals.length !== 1) throw new UsageError('backup takes one directory: backup <dir>');
      return {
        onFiles: (config, context) => {
          refuseEventStoreEngine(config);
          requireDataDir(config);
          return backup(context, config, positionals[0], values.json ?? false);
        },
      };
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

/**
 * `-h` or `--help` after a command, as an option of its own: not the value of another
 * (`--out -h` names a file, which parseArgs then refuses as ambiguous). Arguments that do not
 * parse are left to the command, which tells what is wrong with them.
 */
function helpAsked(args: string[]): boolean {
  try {
    const { tokens } = parseArgs({ args, strict: false, allowPositionals: true, tokens: true, options: { ...ARGUMENT_OPTIONS, help: { type: 'boolean', short: 'h' } } });
    return tokens.some((token) => token.kind === 'option' && token.name === 'help');
  } catch {
    return false;
  }
}

/** Names or --all, not both nor neither (which names exist is known only once the stores are open: rebuild). */
function checkRebuildNames(names: string[], all: boolean): void {
  if (all && names.length > 0) throw new UsageError('name the projections to rebuild or pass --all, not both');
  if (!all && names.length === 0) throw new UsageError('name the projections to rebuild, or pass --all');
}

/** An id given on the command line: empty or with blanks around it is a typing slip, not an id to look for. */
function checkedId(what: string, id: string): void {
  if (id === '' || id.trim() !== id) throw new UsageError(`${what} is ${JSON.stringify(id)}: give the id without blanks around it`);
}

export async function run(argv: string[], context: Omit<CliContext, 'events' | 'reads' | 'projections'>): Promise<number> {
  const [command, ...rest] = argv;
  // Before anything is written (the usage too): a reader that left is no crash (`--help | head -0`).
  const output = watchOutput(context.out);
  // stderr too: a rebuild's progress must not stop it when the reader of its log goes away
  watchOutput(context.err);
  // Asked for, the usage is the answer (stdout, 0), also after a command (`projections:list -h`);
  // without a command it is wrong usage, told on stderr like any other (2).
  if (!command) {
    context.err.write(USAGE);
    return EXIT.usage;
  }
  if (command === 'help' || command === '--help' || command === '-h' || helpAsked(rest)) {
    context.out.write(USAGE);
    return EXIT.ok;
  }
  let close: () => Promise<void> = async () => undefined;
  try {
    const selected = commandOf(command, rest);
    const config = loadConfig(process.env);
    if ('onFiles' in selected) {
      const code = await selected.onFiles(config, context);
      const failure = output.failure();
      if (failure) throw failure;
      return code;
    }
    requireDataDir(config);
    const events = openEventStore(config);
    const reads = await openReadStore(config);
    close = async () => {
      await reads.close();
      await events.close();
    };
    // Every domain library, for their projections: loaded only by the commands that need them
    // (about half a second that the audits, run one quote at a time, do not pay).
    const projections = (): Projection[] => (require('@lib/bootstrap') as typeof import('@lib/bootstrap')).allProjections();
    const code = await selected({ ...context, events, reads, projections });
    const failure = output.failure();
    if (failure) throw failure;
    return code;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      context.err.write(`${(error as Error).message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    if (error instanceof ConfigError) {
      context.err.write(`${error.message}\n`);
      return EXIT.usage;
    }
    context.err.write(`${command} failed: ${messageOf(error)}${busyHint(error)}\n`);
    return EXIT.failed;
  } finally {
    await close();
  }
}

/** An error's message, also of an error made in another realm (a native driver's, under a test runner's VM), which is no `instanceof Error` there. */
function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
}

/**
 * What "database is locked" means to an operator: another process held an embedded store's write
 * lock for the whole busy timeout. A process stopped in the middle of a write (a rebuild frozen by
 * SIGSTOP, a debugger) holds it until it goes on or ends (found by a review, 2026-11-27).
 */
function busyHint(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^SQLITE_(BUSY|LOCKED)/.test(code)) return '';
  return ' (another process held the store\'s write lock throughout the wait: one stopped in the middle of a write holds it until it goes on or ends; projections:status names a running rebuild, and `fuser <DATA_DIR>/*.db` lists the processes that have the files open)';
}

if (require.main === module) {
  run(process.argv.slice(2), { out: process.stdout, err: process.stderr }).then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`${String(error)}\n`);
      process.exitCode = EXIT.failed;
    },
  );
}
