import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/** A process as a lease names it: its host, its pid, and a token of its own (pids are reused). */
export interface ProcessMark {
  host: string;
  pid: number;
  token: string;
}

/** The tokens of the owners this process made and still uses: a predecessor with the same pid (a restarted container) is not among them. */
const LIVE = new Set<string>();

/**
 * A lease owner that names its process, `id` being `<host>/<pid>/<token>`. Another process on
 * the same host can then tell that the owner's process is gone (killed, crashed) and take the
 * lease at once instead of waiting for it to run out (isGoneLocalProcess, isDeadLocalOwner).
 * `release` when the lease is let go.
 */
export function processOwner(): ProcessMark & { id: string; release: () => void } {
  const mark = { host: hostname(), pid: process.pid, token: randomUUID() };
  LIVE.add(mark.token);
  return { ...mark, id: `${mark.host}/${mark.pid}/${mark.token}`, release: () => void LIVE.delete(mark.token) };
}

/**
 * Whether the process a lease names ran on this host and runs no more. False for a process of
 * another host (its processes cannot be seen from here) and for one that runs. A pid the system
 * has since given to another process counts as running: the lease is then waited out.
 */
export function isGoneLocalProcess({ host, pid, token }: ProcessMark): boolean {
  if (host !== hostname()) return false;
  if (pid === process.pid) return !LIVE.has(token);
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process runs under another user
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

const OWNER = /^(.*)\/(\d+)\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** isGoneLocalProcess for an owner id made by processOwner; false for an owner of another form. */
export function isDeadLocalOwner(owner: string): boolean {
  const match = OWNER.exec(owner);
  return match !== null && isGoneLocalProcess({ host: match[1], pid: Number(match[2]), token: match[3] });
}
