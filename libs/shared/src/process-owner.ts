import { randomUUID } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * A process as a lease names it: its host, the PID namespace it runs in, its pid, and a token of
 * its own (pids are reused).
 */
export interface ProcessMark {
  host: string;
  /** the inode of its PID namespace (Linux: `/proc/self/ns/pid`); absent where unknown, and in leases stored before 2026-11-27 */
  pidNamespace?: string | null;
  pid: number;
  token: string;
}

/**
 * This process's PID namespace, null where there is none to read. Two containers may share a
 * host name (host networking) while each sees only its own processes: a pid of the other is no
 * process here, and must not be taken for a gone one.
 */
function pidNamespace(): string | null {
  try {
    return /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? null;
  } catch {
    return null;
  }
}

const HERE = { host: hostname(), pidNamespace: pidNamespace() };

/** The tokens of the owners this process made and still uses: a predecessor with the same pid (a restarted container) is not among them. */
const LIVE = new Set<string>();

/**
 * A lease owner that names its process, `id` being `<host>/<pid namespace or ->/<pid>/<token>`.
 * Another process that sees the same processes (same host, same PID namespace) can then tell that
 * the owner's process is gone (killed, crashed) and take the lease at once instead of waiting for
 * it to run out (isGoneLocalProcess, isDeadLocalOwner). `release` when the lease is let go.
 */
export function processOwner(): Required<ProcessMark> & { id: string; release: () => void } {
  const mark = { ...HERE, pid: process.pid, token: randomUUID() };
  LIVE.add(mark.token);
  return { ...mark, id: `${mark.host}/${mark.pidNamespace ?? '-'}/${mark.pid}/${mark.token}`, release: () => void LIVE.delete(mark.token) };
}

/**
 * Whether the process a lease names is one this process can see (same host and PID namespace)
 * and that runs no more. False for a process of another host or container, whose processes
 * cannot be seen from here, and for one that runs. A pid the system has since given to another
 * process counts as running: the lease is then waited out.
 */
export function isGoneLocalProcess({ host, pidNamespace, pid, token }: ProcessMark): boolean {
  if (host !== HERE.host) return false;
  // A lease stored without its namespace (before 2026-11-27) is taken for this one's, as then.
  if (pidNamespace != null && pidNamespace !== HERE.pidNamespace) return false;
  if (pid === process.pid) return !LIVE.has(token);
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process runs under another user
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

const OWNER = /^(.*)\/(\d+|-)\/(\d+)\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** isGoneLocalProcess for an owner id made by processOwner; false for an owner of another form. */
export function isDeadLocalOwner(owner: string): boolean {
  const match = OWNER.exec(owner);
  if (!match) return false;
  const [, host, namespace, pid, token] = match;
  // `-`: the owner's namespace was unknown; it may be any, so only an unknown one here matches it.
  if (namespace === '-' && HERE.pidNamespace !== null) return false;
  return isGoneLocalProcess({ host, pidNamespace: namespace === '-' ? null : namespace, pid: Number(pid), token });
}

/**
 * Whether an owner may be taken over by a process that starts as the one of its kind on its host
 * (one outbox per deployment): an owner of this host that it cannot see running. That is a gone
 * process of its own PID namespace, any process of another namespace — a container restarted in a
 * new one cannot see that its predecessor is gone — and the bare host name webhook deliveries were
 * claimed with until 2026-11-27. Without this, a restarted container waited out every lease of its
 * predecessor again (found by a review). While it runs, a process takes only isDeadLocalOwner.
 */
export function isPredecessorOwner(owner: string): boolean {
  const match = OWNER.exec(owner);
  if (!match) return owner === HERE.host;
  const [, host, namespace] = match;
  if (host !== HERE.host) return false;
  return namespace !== (HERE.pidNamespace ?? '-') || isDeadLocalOwner(owner);
}

/**
 * Whether a lease held by `owner` may be taken over before it runs out: its process, of this
 * host, is gone (isDeadLocalOwner); `atStart`, by a process that starts as the one of its kind on
 * its host, also whenever it cannot see that process running (isPredecessorOwner, which includes
 * the gone ones).
 */
export function isTakeableOwner(owner: string, atStart: boolean): boolean {
  return atStart ? isPredecessorOwner(owner) : isDeadLocalOwner(owner);
}
