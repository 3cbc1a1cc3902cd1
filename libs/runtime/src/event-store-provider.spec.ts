import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { EventStore, SqliteEventStore } from '@lib/event-store';
import { EventStoreDbEventStore } from '@lib/event-store/eventstoredb-event-store';
import { loadConfig } from '@lib/shared';
import { ConfigModule } from './config.module';
import { RuntimeModule } from './runtime.module';

describe('the EventStore provider', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'runtime-'));
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  const eventStoreFor = async (env: Record<string, string>) => {
    const config = loadConfig({ DATA_DIR: dataDir, ...env });
    const app = await Test.createTestingModule({ imports: [ConfigModule.forRoot(config), RuntimeModule] }).compile();
    const store = app.get(EventStore);
    await app.close();
    return store;
  };

  it('is the embedded SQLite store by default', async () => {
    expect(await eventStoreFor({})).toBeInstanceOf(SqliteEventStore);
  });

  it('is EventStoreDB when EVENTSTORE_URL is set (connecting lazily)', async () => {
    expect(await eventStoreFor({ EVENTSTORE_URL: 'esdb://127.0.0.1:1?tls=false' })).toBeInstanceOf(EventStoreDbEventStore);
  });

  it('stops start-up with a line naming EVENTSTORE_URL when it is not a connection string', async () => {
    await expect(eventStoreFor({ EVENTSTORE_URL: 'http://eventstore:2113' })).rejects.toThrow(/EVENTSTORE_URL/);
  });
});
