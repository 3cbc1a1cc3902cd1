import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ObservabilityModule } from '@lib/observability';
import { DomainModule } from '@lib/bootstrap';
import { EventStore } from '@lib/event-store';
import { MessageBus, SqliteMessageBus, type BusMessage, type ConsumedMessage } from '@lib/message-bus';
import { waitFor } from '@lib/shared/testing/processes';
import { ReadStore } from '@lib/read-store';
import { ConfigModule, RuntimeModule } from '@lib/runtime';
import { loadConfig } from '@lib/shared';
import { DOMAIN_EVENTS_TOPIC, OutboxModule } from './outbox.module';

/** A bus whose publishes wait until the test lets them through, as a slow broker's acks would. */
class GatedBus extends SqliteMessageBus {
  publishes = 0;
  private open!: () => void;
  private gate = new Promise<void>((resolve) => (this.open = resolve));

  release(): void {
    this.open();
  }

  override async publish(topic: string, messages: BusMessage[]): Promise<void> {
    this.publishes += 1;
    await this.gate;
    return super.publish(topic, messages);
  }
}

describe('outbox relay', () => {
  let dataDir: string;
  let app: INestApplicationContext;
  let bus: GatedBus;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'outbox-relay-'));
    const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'adm_test_token_0123456789_padded_to_32_chars', SEED_DEMO: 'false' });
    bus = new GatedBus({ file: join(dataDir, 'bus.db'), pollIntervalMs: 20 });
    const moduleRef = await Test.createTestingModule({ imports: [ConfigModule.forRoot(config), RuntimeModule, ObservabilityModule.forRoot({ projectionsMustBeCurrent: false }), DomainModule, OutboxModule] })
      .overrideProvider(MessageBus)
      .useValue(bus)
      .compile();
    app = await moduleRef.init();
  });
  afterEach(async () => {
    bus.release();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('publishes events keyed by their stream and moves its checkpoint only once the bus has accepted them', async () => {
    const events = app.get(EventStore);
    const reads = app.get(ReadStore);
    await events.appendToStream('probe-a', [{ type: 'probe.v1.happened', data: { n: 1 } }], 'no_stream');
    const { position } = await events.appendToStream('probe-b', [{ type: 'probe.v1.happened', data: { n: 1 } }], 'no_stream');

    await waitFor(() => bus.publishes > 0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await reads.getCheckpoint('relay:domain-events')).toBeNull();

    bus.release();
    const audit: ConsumedMessage[] = [];
    await bus.consume({ groupId: 'audit', topics: [DOMAIN_EVENTS_TOPIC], handleBatch: async (batch) => void audit.push(...batch) });
    await waitFor(() => audit.length === 2);
    let checkpoint: number | null;
    const deadline = Date.now() + 5_000;
    while ((checkpoint = await reads.getCheckpoint('relay:domain-events')) !== position && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }

    expect(checkpoint).toBe(position);
    expect(audit.map((m) => m.key)).toEqual(['probe-a', 'probe-b']);
    expect(audit.map((m) => JSON.parse(m.value).streamId)).toEqual(['probe-a', 'probe-b']);
  });
});
