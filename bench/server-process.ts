import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** peak resident set size of the process so far, in MiB (VmHWM) */
  peakRssMiB(): number;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** node's own options, before the script (preloads, --cpu-prof) */
  nodeArgs?: string[];
  /** what stop() sends; SIGKILL follows if the process has not exited 30 s later */
  stopSignal?: NodeJS.Signals;
}

/**
 * Starts a script in a child process and waits until it answers HTTP on the given port (killed
 * when it does not within 60 s).
 */
export async function startProcess(script: string, args: string[], env: Record<string, string>, port: number, readyPath: string, options: StartOptions = {}): Promise<ServerProcess> {
  // Its stdout (the JSON log, a line per request) goes to a file, as a deployment's log collector
  // takes it: read through a pipe by this process, it took CPU from the load generator here.
  const logDir = mkdtempSync(join(tmpdir(), 'bench-log-'));
  const logFile = join(logDir, 'stdout.log');
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', log, 'inherit'] });
  closeSync(log);
  const output = () => readFileSync(logFile, 'utf8').slice(-16_384);
  const removeLog = () => rmSync(logDir, { recursive: true, force: true });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      const error = new Error(`${script} exited with ${child.exitCode}: ${output()}`);
      removeLog();
      throw error;
    }
    try {
      const res = await fetch(baseUrl + readyPath);
      if (res.status < 500) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      const error = new Error(`${script} did not start in 60 s: ${output()}`);
      removeLog();
      throw error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // Also when it dies without stop() (the crash test kills it): its log goes with it.
  child.once('exit', removeLog);
  let stopping: Promise<void> | null = null;
  return {
    child,
    baseUrl,
    peakRssMiB: () => peakRssMiB(child.pid!),
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.once('exit', () => {
          clearTimeout(killer);
          resolve();
        });
        child.kill(options.stopSignal ?? 'SIGTERM');
      }).then(removeLog);
      return stopping;
    },
  };
}

/** Peak resident set size of a process so far, in MiB (VmHWM); 0 once it is gone. */
export function peakRssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
  } catch {
    return 0;
  }
}

/** CPU time (user + system) a process has used so far, in seconds; NaN once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    // Fields after the command name "(…)": utime is the 12th, stime the 13th, in ticks of 1/100 s.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}
