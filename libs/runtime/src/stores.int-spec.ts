import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { engineOf } from '@lib/event-sourcing';
import { loadConfig } from '@lib/shared';
import { EMBEDDED_FILES, openEventStore, openMessageBus, openReadStore } from './stores';

/** The connection's `PRAGMA synchronous`: 1 NORMAL, 2 FULL. */
const synchronousOf = (store: object) => (store as { db: Database.Database }).db.pragma('synchronous', { simple: true });

// The relay's checkpoint and the webhook deliveries (read store) guard messages and offsets in the
// bus file: after a power loss neither file may keep a commit whose counterpart the other lost.
describe('the embedded stores of the product', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'stores-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('sync every commit of the read store and of the bus to disk (synchronous=FULL)', async () => {
    const config = loadConfig({ DATA_DIR: dataDir });
    const reads = await openReadStore(config);
    const bus = await openMessageBus(config);
    try {
      expect(synchronousOf(engineOf(reads))).toBe(2);
      expect(synchronousOf(bus)).toBe(2);
    } finally {
      await reads.close();
      await bus.close();
    }
  });
});

describe('DATA_DIR', () => {
  let parent: string;
  const modeOf = (path: string) => statSync(path).mode & 0o777;
  beforeEach(() => {
    parent = mkdtempSync(join(tmpdir(), 'data-dir-'));
  });
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  it('is created readable by the product\'s user only when the product creates it', async () => {
    const dataDir = join(parent, 'data');
    const events = openEventStore(loadConfig({ DATA_DIR: dataDir }));
    try {
      expect(modeOf(dataDir)).toBe(0o700);
      expect(statSync(join(dataDir, EMBEDDED_FILES.eventStore)).isFile()).toBe(true);
    } finally {
      await events.close();
    }
  });

  it('is left as it is when it exists (operators chmod it themselves)', async () => {
    const dataDir = join(parent, 'data');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const events = openEventStore(loadConfig({ DATA_DIR: dataDir }));
    try {
      expect(modeOf(dataDir)).toBe(0o755);
    } finally {
      await events.close();
    }
  });
});
