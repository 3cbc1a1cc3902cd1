import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { isDeadLocalOwner, isGoneLocalProcess, processOwner } from './process-owner';

const UUID = '123e4567-e89b-42d3-a456-426614174000';

describe('processOwner / isDeadLocalOwner', () => {
  it('given an owner this process uses, then it is alive; once released (or a predecessor with the same pid), it is dead', () => {
    const owner = processOwner();
    expect(owner.id).toMatch(new RegExp(`^${hostname()}/${process.pid}/[0-9a-f-]{36}$`));
    expect(isDeadLocalOwner(owner.id)).toBe(false);
    owner.release();
    expect(isDeadLocalOwner(owner.id)).toBe(true);
    expect(isDeadLocalOwner(`${hostname()}/${process.pid}/${UUID}`)).toBe(true);
    expect(isGoneLocalProcess({ host: owner.host, pid: owner.pid, token: owner.token })).toBe(true);
  });

  it('given the owner of another process of this host, then it is dead only once that process has exited', () => {
    const { pid } = spawnSync(process.execPath, ['-e', '']);
    expect(isDeadLocalOwner(`${hostname()}/${pid}/${UUID}`)).toBe(true);
    expect(isDeadLocalOwner(`${hostname()}/${process.ppid}/${UUID}`)).toBe(false);
  });

  it('given an owner of another host or of another form, then it is never taken for dead', () => {
    expect(isDeadLocalOwner(`not-${hostname()}/999999/${UUID}`)).toBe(false);
    expect(isDeadLocalOwner(UUID)).toBe(false);
    expect(isDeadLocalOwner(`${hostname()}/abc/${UUID}`)).toBe(false);
  });
});
