#!/usr/bin/env node
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import type { Projection } from '@lib/event-sourcing';
import { openEventStore, openReadStore } from '@lib/runtime/stores';
import { ConfigError, loadConfig } from '@lib/shared';
import { auditExport, auditQuoteCommand, EXIT, projectionStatus, rebuild, type CliContext } from './commands';
import { parseTimeRange } from './time-range';
import { UsageError } from './usage-error';

const USAGE = `usage: quoting-cli <command> [options]   (npm run cli -- <command>)

  projections:list | projections:status [--json]
      every projection: name, version, live generation, checkpoint, lag behind the log
  projections:rebuild <name>… | --all [--batch-size N] [--switch-grace-ms MS]
      blue/green rebuild from the start of the log; run it again to continue a stopped one
  audit:quote <quoteId> [--json]
      every version of the quote from its stream; exits 1 when the read model differs from the replay
  audit:export --org <organizationId> [--from <ISO date|ms>] [--to <ISO date|ms>] [--out <file>]
      the organization's events as NDJSON (stdout unless --out)

Works on the stores the apps use: DATA_DIR (embedded), or the engines that EVENTSTORE_URL /
MONGODB_URL name. Exit codes: 0 ok, 1 failed (e.g. an audit mismatch), 2 wrong usage.
`;

function count(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number, got ${value}`);
  return n;
}

export async function run(argv: string[], context: Omit<CliContext, 'events' | 'reads' | 'projections'>): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    context.out.write(USAGE);
    return command ? EXIT.ok : EXIT.usage;
  }
  let close: () => Promise<void> = async () => undefined;
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        all: { type: 'boolean' },
        json: { type: 'boolean' },
        org: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        out: { type: 'string' },
        'batch-size': { type: 'string' },
        'switch-grace-ms': { type: 'string' },
      },
    });
    const config = loadConfig(process.env);
    const events = openEventStore(config);
    const reads = await openReadStore(config);
    close = async () => {
      await reads.close();
      await events.close();
    };
    // Every domain library, for their projections: loaded only by the commands that need them
    // (about half a second that the audits, run one quote at a time, do not pay).
    const projections = (): Projection[] => (require('@lib/bootstrap') as typeof import('@lib/bootstrap')).allProjections();
    const full: CliContext = { ...context, events, reads, projections };
    switch (command) {
      case 'projections:list':
      case 'projections:status':
        return await projectionStatus(full, values.json ?? false);
      case 'projections:rebuild':
        return await rebuild(full, positionals, values.all ?? false, {
          batchSize: count('batch-size', values['batch-size']),
          switchGraceMs: count('switch-grace-ms', values['switch-grace-ms']),
        });
      case 'audit:quote':
        if (positionals.length !== 1) throw new UsageError('audit:quote takes one quote id');
        return await auditQuoteCommand(full, positionals[0], values.json ?? false);
      case 'audit:export':
        if (!values.org) throw new UsageError('audit:export needs --org <organizationId>');
        return await auditExport(full, { organizationId: values.org, ...parseTimeRange(values), out: values.out });
      default:
        throw new UsageError(`unknown command ${command}`);
    }
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      context.err.write(`${(error as Error).message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    if (error instanceof ConfigError) {
      context.err.write(`${error.message}\n`);
      return EXIT.usage;
    }
    context.err.write(`${command} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.failed;
  } finally {
    await close();
  }
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
