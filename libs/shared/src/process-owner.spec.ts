import { spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { isDeadLocalOwner, isGoneLocalProcess, isPredecessorOwner, isTakeableOwner, processOwner } from './process-owner';

const UUID = '123e4567-e89b-42d3-a456-426614174000';
const NAMESPACE = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))![1];
const here = (pid: number) => `${hostname()}/${NAMESPACE}/${pid}/${UUID}`;

describe('processOwner / isDeadLocalOwner', () => {
  it('given an owner this process uses, then it is alive; once released (or a predecessor with the same pid), it is dead', () => {
    const owner = processOwner();
    expect(owner.id).toMatch(new RegExp(`^${hostname()}/${NAMESPACE}/${process.pid}/[0-9a-f-]{36}$`));
    expect(isDeadLocalOwner(owner.id)).toBe(false);
    owner.release();
    expect(isDeadLocalOwner(owner.id)).toBe(true);
    expect(isDeadLocalOwner(here(process.pid))).toBe(true);
    expect(isGoneLocalProcess(owner)).toBe(true);
  });

  it('given the owner of another process of this host, then it is dead only once that process has exited', () => {
    const { pid } = spawnSync(process.execPath, ['-e', '']);
    expect(isDeadLocalOwner(here(pid))).toBe(true);
    expect(isDeadLocalOwner(here(process.ppid))).toBe(false);
  });

  it('given an owner of another host, of another PID namespace (a container sharing the host name), or of another form, then it is never taken for dead', () => {
    const { pid } = spawnSync(process.execPath, ['-e', '']);
    expect(isDeadLocalOwner(`not-${hostname()}/${NAMESPACE}/${pid}/${UUID}`)).toBe(false);
    expect(isDeadLocalOwner(`${hostname()}/1${NAMESPACE}/${pid}/${UUID}`)).toBe(false);
    expect(isDeadLocalOwner(`${hostname()}/-/${pid}/${UUID}`)).toBe(false);
    expect(isDeadLocalOwner(UUID)).toBe(false);
    expect(isDeadLocalOwner(`${hostname()}/${NAMESPACE}/abc/${UUID}`)).toBe(false);
  });

  it('given a mark stored without its namespace (a rebuild lease of before), then it is compared by host and pid, as it was', () => {
    const { pid } = spawnSync(process.execPath, ['-e', '']);
    expect(isGoneLocalProcess({ host: hostname(), pid, token: UUID })).toBe(true);
    expect(isGoneLocalProcess({ host: hostname(), pidNamespace: `1${NAMESPACE}`, pid, token: UUID })).toBe(false);
  });
});

describe('isPredecessorOwner (what a starting process may take over)', () => {
  it('takes an owner of this host it cannot see running: gone, of another PID namespace, or the bare host name of before; never a live one it sees, nor another host', () => {
    const { pid } = spawnSync(process.execPath, ['-e', '']);
    const live = processOwner();
    expect(isPredecessorOwner(here(pid))).toBe(true);
    expect(isPredecessorOwner(`${hostname()}/1${NAMESPACE}/1/${UUID}`)).toBe(true);
    expect(isPredecessorOwner(hostname())).toBe(true);
    expect(isPredecessorOwner(live.id)).toBe(false);
    expect(isPredecessorOwner(here(process.ppid))).toBe(false);
    expect(isPredecessorOwner(`not-${hostname()}/1${NAMESPACE}/1/${UUID}`)).toBe(false);
    expect(isPredecessorOwner('another-host')).toBe(false);
    live.release();
  });
});

describe('isTakeableOwner', () => {
  it('takes a gone process of this host at any time, and one it cannot see only at start', () => {
    const { pid } = spawnSync(process.execPath, ['-e', '']);
    const container = `${hostname()}/1${NAMESPACE}/1/${UUID}`;
    expect([isTakeableOwner(here(pid), false), isTakeableOwner(here(pid), true)]).toEqual([true, true]);
    expect([isTakeableOwner(container, false), isTakeableOwner(container, true)]).toEqual([false, true]);
    expect([isTakeableOwner(here(process.ppid), false), isTakeableOwner(here(process.ppid), true)]).toEqual([false, false]);
  });
});
