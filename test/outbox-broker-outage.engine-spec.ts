import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@lib/event-store';
import type { ReadinessReport } from '@lib/observability';
import { OwnKafkaBroker } from './support/kafka-broker';
import { freePort, startFromSources, type ProductProcess } from './support/product-process';

/** A stopped broker counts within one probe timeout (2 s) plus one shared probe (1 s); the rest is room for a busy machine. */
const NOT_READY_WITHIN_MS = 10_000;
/** A broker that serves again answers the next probe's metadata request (probes share one for 1 s). */
const READY_AGAIN_WITHIN_MS = 10_000;

/**
 * The standalone outbox's /readyz (OPS_PORT) while its Kafka broker stops and starts again. The
 * broker is the test's own (scripts/engines/kafka.sh on other ports and a temporary directory):
 * the engine suite's shared broker keeps running for the other suites. The stores are the
 * embedded ones, so only the bus can make the outbox not ready.
 */
describe('the outbox /readyz while its Kafka broker goes down and comes back', () => {
  let broker: OwnKafkaBroker | undefined;
  let dataDir: string | undefined;
  let outbox: ProductProcess | undefined;

  beforeAll(async () => {
    broker = await OwnKafkaBroker.create();
    await broker.start();
    dataDir = mkdtempSync(join(tmpdir(), 'outbox-outage-'));
    const opsPort = await freePort();
    outbox = await startFromSources(
      'apps/outbox/src/main.ts',
      {
        DATA_DIR: dataDir,
        ADMIN_TOKEN: 'adm_outbox_outage_0123456789_padded_to_32_chars',
        OPS_PORT: String(opsPort),
        KAFKA_BROKERS: broker.address,
        // The engine suite sets these for the other suites; empty means unset.
        MONGODB_URL: '',
        EVENTSTORE_URL: '',
      },
      `http://127.0.0.1:${opsPort}`,
    );
  }, 180_000);

  afterAll(async () => {
    try {
      if (outbox && outbox.child.exitCode === null) {
        const { child, exited } = outbox;
        child.kill('SIGTERM');
        const stopped = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), 20_000);
          void exited.then(() => {
            clearTimeout(timer);
            resolve(true);
          });
        });
        if (!stopped) child.kill('SIGKILL');
      }
    } finally {
      await broker?.remove();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  async function readyz(): Promise<{ status: number; report: ReadinessReport }> {
    if (outbox!.child.exitCode !== null) throw new Error(`the outbox exited with ${outbox!.child.exitCode}`);
    const response = await fetch(`${outbox!.baseUrl}/readyz`, { signal: AbortSignal.timeout(10_000) });
    return { status: response.status, report: (await response.json()) as ReadinessReport };
  }

  /** Polls /readyz until it answers `status`; fails naming the last answer once `withinMs` has passed. */
  async function readyzAnswers(status: number, withinMs: number): Promise<ReadinessReport> {
    const deadline = performance.now() + withinMs;
    for (;;) {
      const answer = await readyz();
      if (answer.status === status) return answer.report;
      if (performance.now() > deadline) throw new Error(`/readyz did not answer ${status} within ${withinMs} ms; last: ${answer.status} ${JSON.stringify(answer.report)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('turns 503 naming messageBus soon after the broker stops, and 200 again soon after it is back', async () => {
    const before = await readyz();
    expect(before.status).toBe(200);
    expect(before.report.checks.messageBus).toEqual({ ok: true });

    await broker!.stop();
    const down = await readyzAnswers(503, NOT_READY_WITHIN_MS);
    expect(down.status).toBe('not_ready');
    expect(down.checks).toEqual({
      eventStore: { ok: true },
      readStore: { ok: true },
      readStoreMatchesLog: { ok: true },
      messageBus: { ok: false, problem: expect.stringMatching(/no broker answered|no answer within/) },
    });

    // Events written meanwhile (by a gateway on the same DATA_DIR) wait for the bus: the relay's lag says how many.
    const events = new SqliteEventStore({ file: join(dataDir!, 'events.db') });
    try {
      await events.appendToStream('outage-test-1', Array.from({ length: 5 }, (_, n) => ({ type: 'test.v1.written', data: { n } })), 'no_stream');
    } finally {
      await events.close();
    }
    expect(await relayLagWithin((lag) => lag >= 5, 10_000)).toBeGreaterThanOrEqual(5);

    await broker!.start();
    const up = await readyzAnswers(200, READY_AGAIN_WITHIN_MS);
    expect(up).toEqual({ status: 'ready', checks: { eventStore: { ok: true }, readStore: { ok: true }, readStoreMatchesLog: { ok: true }, messageBus: { ok: true } } });
    // Relayed once the bus is back.
    expect(await relayLagWithin((lag) => lag === 0, 60_000)).toBe(0);
  }, 180_000);

  /** Scrapes `outbox_relay_lag_events` until `wanted` holds for it; fails naming the last value once `withinMs` has passed. */
  async function relayLagWithin(wanted: (lag: number) => boolean, withinMs: number): Promise<number> {
    const deadline = performance.now() + withinMs;
    for (;;) {
      const text = await (await fetch(`${outbox!.baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
      const lag = Number(/^outbox_relay_lag_events (\d+)$/m.exec(text)?.[1] ?? NaN);
      if (wanted(lag)) return lag;
      if (performance.now() > deadline) throw new Error(`outbox_relay_lag_events was ${lag} after ${withinMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
});
