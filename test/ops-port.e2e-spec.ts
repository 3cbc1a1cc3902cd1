import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startFromSources, type ProductProcess } from './support/product-process';

/** The standalone projector and outbox have no API; with OPS_PORT they answer the operations endpoints. */
describe('standalone projector and outbox on OPS_PORT', () => {
  let dataDir: string;
  const running: ProductProcess[] = [];

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'ops-port-'));
  });
  afterAll(() => {
    for (const process of running) if (process.child.exitCode === null) process.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(main: string) {
    const opsPort = await freePort();
    const process = await startFromSources(main, { DATA_DIR: dataDir, ADMIN_TOKEN: 'adm_ops_port_test_0123456789_padded_to_32_chars', OPS_PORT: String(opsPort) }, `http://127.0.0.1:${opsPort}`);
    running.push(process);
    return process;
  }

  it.each([
    ['apps/projector/src/main.ts', 'projector', ['eventStore', 'readStore', 'projections', 'readStoreMatchesLog'], /projection_lag_events\{projection="quotes"\} 0/],
    ['apps/outbox/src/main.ts', 'outbox', ['eventStore', 'readStore', 'readStoreMatchesLog', 'messageBus'], /outbox_deliveries\{status="pending"\} 0/],
  ])('%s serves /healthz, /readyz and /metrics, and exits 0 on SIGTERM', async (main, name, checks, metric) => {
    const process = await start(main);
    const health = await fetch(`${process.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });

    const ready = await fetch(`${process.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    const report = (await ready.json()) as { status: string; checks: Record<string, unknown> };
    expect(report.status).toBe('ready');
    expect(Object.keys(report.checks).sort()).toEqual([...checks].sort());

    const metrics = await fetch(`${process.baseUrl}/metrics`);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = await metrics.text();
    expect(text).toMatch(metric);
    expect(text).toContain('process_cpu_seconds_total');
    expect((await fetch(`${process.baseUrl}/api/v1/quotes`)).status).toBe(404);

    process.child.kill('SIGTERM');
    expect(await process.exited).toBe(0);
    expect(process.logs().map((line) => line.process)).toContain(name);
    expect(process.logs().map((line) => line.msg)).toEqual(expect.arrayContaining(['started', 'shutting down', 'stopped']));
  }, 90_000);
});
