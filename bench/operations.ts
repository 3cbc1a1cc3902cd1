/**
 * Issue 6 benchmarks: a blue/green rebuild of every projection over a generated event store, and
 * audit:quote of a quote with 100 versions. The rebuild and the audit run as the CLI does, in a
 * child process of their own, so its peak RSS is theirs alone.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@lib/event-store';
import { auditQuote, quoteStream } from '@lib/quotes';
import { openReadStore } from '@lib/runtime';
import { loadConfig } from '@lib/shared';
import { generateQuoteEvents, quoteLife } from './event-generator';

const EVENTS = Number(process.env.BENCH_REBUILD_EVENTS ?? 1_000_000);

interface CliRun {
  code: number;
  seconds: number;
  /** user + system CPU time: what the run costs on a machine shared with other work */
  cpuSeconds: number;
  maxRssMb: number;
  stdout: string;
}

/** Runs the built CLI in a child process; the child reports its own peak RSS. */
export function runCli(dataDir: string, args: string[]): Promise<CliRun> {
  const main = join(__dirname, '../apps/cli/src/main.js');
  const script = `require(${JSON.stringify(main)}).run(${JSON.stringify(args)}, { out: process.stdout, err: process.stderr })
    .then((code) => { const u = process.resourceUsage(); process.stderr.write('maxrss ' + u.maxRSS + ' cpu ' + (u.userCPUTime + u.systemCPUTime) + '\\n'); process.exitCode = code; })`;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      const usage = /maxrss (\d+) cpu (\d+)/.exec(stderr);
      if (!usage) return reject(new Error(`the CLI did not finish: ${stderr.slice(-2000)}`));
      resolve({ code: code ?? 1, seconds: (performance.now() - started) / 1000, cpuSeconds: Number(usage[2]) / 1e6, maxRssMb: Number(usage[1]) / 1024, stdout });
    });
  });
}

export async function benchRebuild(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-rebuild-'));
  try {
    const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
    const started = performance.now();
    const written = await generateQuoteEvents(store, EVENTS, { onProgress: (n) => process.stderr.write(`generated ${n} events\r`) });
    const generateSeconds = (performance.now() - started) / 1000;
    await store.close();
    process.stderr.write(`\ngenerated ${written} events in ${generateSeconds.toFixed(1)} s; rebuilding\n`);
    const first = await runCli(dataDir, ['projections:rebuild', '--all']);
    if (first.code !== 0) throw new Error(`rebuild failed: ${first.stdout}`);
    // A second rebuild: generation 1 is live and is dropped after the switch to generation 2.
    const second = await runCli(dataDir, ['projections:rebuild', '--all']);
    if (second.code !== 0) throw new Error(`rebuild failed: ${second.stdout}`);
    const rate = (seconds: number) => Math.round(written / seconds).toLocaleString('en');
    const row = (name: string, run: CliRun) =>
      `| ${name} | ${run.seconds.toFixed(1)} | ${rate(run.seconds)} | ${run.cpuSeconds.toFixed(1)} | ${rate(run.cpuSeconds)} | ${run.maxRssMb.toFixed(0)} MB |`;
    return [
      `### Rebuild of all projections over ${written.toLocaleString('en')} events (${process.env.MONGODB_URL ? 'read models in the MongoDB of MONGODB_URL' : 'embedded'}; events in the embedded store)`,
      '',
      `Generated through the event store port in ${generateSeconds.toFixed(1)} s (${Math.round(written / generateSeconds).toLocaleString('en')} events/s).`,
      'The whole CLI process (start, build, indexes, switch, drop of the old generation): wall time, and',
      'CPU time (user + system), which is what it costs when other work shares the cores.',
      '',
      '| run | wall s | events/s (wall) | CPU s | events/s (CPU) | peak RSS |',
      '|---|---:|---:|---:|---:|---:|',
      row('first rebuild (g0 → g1)', first),
      row('second rebuild (g1 → g2)', second),
      '',
    ];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchAudit(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-audit-'));
  try {
    const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
    // the draft's breakdown replaced, then 99 revisions: versions 1…100, each sent.
    const { quoteId, events } = quoteLife(0, 'org_audit', 100);
    await store.appendToStream(quoteStream(quoteId), events.map((event) => ({ ...event, metadata: { actor: 'apiKey:key_audit' } })), 'no_stream');
    await store.close();
    const build = await runCli(dataDir, ['projections:rebuild', '--all']);
    if (build.code !== 0) throw new Error('could not build the read model');
    const runs: CliRun[] = [];
    for (let i = 0; i < 5; i++) runs.push(await runCli(dataDir, ['audit:quote', quoteId, '--json']));
    if (runs.some((run) => run.code !== 0)) throw new Error('the audit found a mismatch');
    const audit = JSON.parse(runs[0].stdout) as { steps: Array<{ version: number }> };
    const versions = new Set(audit.steps.map((s) => s.version)).size;
    // The audit itself (read the stream, replay, read and compare the stored versions), in this process.
    const eventStore = new SqliteEventStore({ file: join(dataDir, 'events.db') });
    const reads = await openReadStore(loadConfig({ DATA_DIR: dataDir }));
    const inProcess: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      const result = await auditQuote(eventStore, reads, quoteId);
      inProcess.push(performance.now() - started);
      if (!result || result.mismatches.length > 0) throw new Error('the audit found a mismatch');
    }
    await reads.close();
    await eventStore.close();
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    const [wall, cpu, audits] = [sorted(runs.map((run) => run.seconds)), sorted(runs.map((run) => run.cpuSeconds)), sorted(inProcess.slice(5))];
    return [
      `### audit:quote of a quote with ${versions} versions (${events.length} events)`,
      '',
      '| measured | median | fastest | slowest |',
      '|---|---:|---:|---:|',
      `| the audit itself (auditQuote, warm, 15 runs) | ${audits[7].toFixed(1)} ms | ${audits[0].toFixed(1)} ms | ${audits[14].toFixed(1)} ms |`,
      `| whole CLI process, wall (Node start-up, loading, stores, audit; 5 runs) | ${wall[2].toFixed(2)} s | ${wall[0].toFixed(2)} s | ${wall[4].toFixed(2)} s |`,
      `| whole CLI process, CPU (user + system) | ${cpu[2].toFixed(2)} s | ${cpu[0].toFixed(2)} s | ${cpu[4].toFixed(2)} s |`,
      '',
      `Peak RSS of the CLI process: ${runs[0].maxRssMb.toFixed(0)} MB.`,
      '',
    ];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
