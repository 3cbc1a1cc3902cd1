/**
 * Shared by the webhook benchmarks (bench/pricing-loop.ts, bench/dispatch.ts): the embedded product
 * in a child process (optionally under `node --cpu-prof`), a JSON client and an organization whose
 * webhooks go to a receiver in the benchmark process. Loopback (127.0.0.1) only.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { DEMO_TEMPLATE } from '../apps/api-gateway/src/demo-template';
import { BENCH_ADMIN_TOKEN, benchProductEnv } from './seed';
import { cpuSeconds, startProcess } from './server-process';

export interface ProductProcess {
  child: ChildProcess;
  baseUrl: string;
  dataDir: string;
  /** peak resident set size of the gateway so far, in MiB (VmHWM) */
  peakRssMiB(): number;
  /** CPU time (user + system) the gateway has used so far, in seconds (/proc/<pid>/stat, 100 ticks/s) */
  cpuSeconds(): number;
  /** where the CPU profile was written (after stop), when started with cpuProfileDir */
  cpuProfiles(): string[];
  /** the event-loop probe's samples file (bench/loop-probe.ts) */
  loopProbeFile: string;
  stop(): Promise<void>;
}

export interface ProductOptions {
  dataDir: string;
  port: number;
  env?: Record<string, string>;
  /** run the gateway under `node --cpu-prof` and write the profile here when it stops */
  cpuProfileDir?: string;
  /** arguments of the gateway's main.js, e.g. `--only-gateway` (no projector, no outbox in it) */
  args?: string[];
}

/** How long a setImmediate scheduled from a timer waited in the gateway (bench/loop-probe.ts), per window. */
export function loopWaits(file: string, fromUs: number, toUs: number): number[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const waits: number[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    for (const [at, wait] of JSON.parse(line) as Array<[number, number]>) if (at >= fromUs && at < toUs) waits.push(wait);
  }
  return waits;
}

/**
 * The whole product (gateway + projector + outbox, embedded SQLite) as `npm start` runs it, with
 * the rate limits off and webhooks allowed to reach 127.0.0.1.
 */
export async function startProduct(options: ProductOptions): Promise<ProductProcess> {
  const { dataDir, port } = options;
  const baseUrl = `http://127.0.0.1:${port}`;
  const loopProbeFile = join(dataDir, 'loop-probe.jsonl');
  const nodeArgs: string[] = ['-r', join(__dirname, 'loop-probe.js')];
  if (options.cpuProfileDir) {
    mkdirSync(options.cpuProfileDir, { recursive: true });
    // The gateway ends itself with a signal after its graceful shutdown (Nest shutdown hooks), and a
    // process killed by a signal writes no --cpu-prof file: the preload turns SIGUSR2 into exit(0).
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`, '-r', join(__dirname, 'exit-on-sigusr2.js'));
  }
  const env = {
    ...benchProductEnv(dataDir, port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: baseUrl,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    BENCH_LOOP_PROBE_FILE: loopProbeFile,
    ...options.env,
  };
  const gateway = await startProcess(join(__dirname, '../apps/api-gateway/src/main.js'), options.args ?? [], env, port, '/healthz', {
    nodeArgs,
    stopSignal: options.cpuProfileDir ? 'SIGUSR2' : 'SIGTERM',
  });
  const { child } = gateway;
  return {
    child,
    baseUrl,
    dataDir,
    loopProbeFile,
    peakRssMiB: gateway.peakRssMiB,
    cpuSeconds: () => cpuSeconds(child.pid!),
    cpuProfiles() {
      if (!options.cpuProfileDir) return [];
      return readdirSync(options.cpuProfileDir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(options.cpuProfileDir!, f));
    },
    stop: gateway.stop,
  };
}

/** CPU time all processes of the machine have used (/proc/stat: everything but idle and iowait), in seconds. */
export function machineBusySeconds(): number {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number);
    return (user + nice + system + irq + softirq + steal) / 100;
  } catch {
    return NaN;
  }
}

/** The CPU the gateway, this process and everything else used over a stretch, in % of one core. */
export class CpuMeter {
  private readonly gateway0: number;
  private readonly bench0 = process.cpuUsage();
  private readonly machine0 = machineBusySeconds();
  private readonly started = Date.now();

  constructor(private readonly product: ProductProcess) {
    this.gateway0 = product.cpuSeconds();
  }

  read(): { gateway: number; bench: number; others: number } {
    const seconds = (Date.now() - this.started) / 1000;
    const gateway = this.product.cpuSeconds() - this.gateway0;
    const b = process.cpuUsage(this.bench0);
    const bench = (b.user + b.system) / 1e6;
    const others = Math.max(0, machineBusySeconds() - this.machine0 - gateway - bench);
    const pct = (v: number) => (100 * v) / seconds;
    return { gateway: pct(gateway), bench: pct(bench), others: pct(others) };
  }
}

export const cpuText = (c: { gateway: number; bench: number; others: number }) =>
  `gateway ${c.gateway.toFixed(0)} %, benchmark process ${c.bench.toFixed(0)} %, other processes ${c.others.toFixed(0)} % (of one core; ${cpus().length} cores)`;

/** A JSON request; any status ≥ 400 throws with the body. */
export async function json<T = any>(baseUrl: string, method: string, path: string, token?: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export interface WebhookOrganization {
  organizationId: string;
  slug: string;
  apiKey: string;
  templateId: string;
  /** the signing secret as the admin API issued it (whsec_…) */
  secret: string;
}

/**
 * An organization with the demo template, an API key, a signing secret taken from the admin API,
 * then its webhook settings (so enabling live pricing does not mint a second secret).
 */
export async function seedWebhookOrganization(baseUrl: string, settings: Record<string, unknown>): Promise<WebhookOrganization> {
  const slug = `bench-${process.pid}-${Date.now()}`;
  const org = await json(baseUrl, 'POST', '/admin/v1/organizations', BENCH_ADMIN_TOKEN, { name: 'Bench Windows', slug });
  const { secret } = await json<{ secret: string }>(baseUrl, 'POST', `/admin/v1/organizations/${org.id}/signing-secret`, BENCH_ADMIN_TOKEN);
  await json(baseUrl, 'PATCH', `/admin/v1/organizations/${org.id}`, BENCH_ADMIN_TOKEN, { settings });
  const key = await json(baseUrl, 'POST', `/admin/v1/organizations/${org.id}/api-keys`, BENCH_ADMIN_TOKEN, { name: 'bench' });
  const template = await json(baseUrl, 'POST', `/admin/v1/organizations/${org.id}/templates`, BENCH_ADMIN_TOKEN, DEMO_TEMPLATE);
  return { organizationId: org.id, slug, apiKey: key.key, templateId: template.id, secret };
}

/** Every record of GET /api/v1/events (newest first), page by page; bounded by maxPages. */
export interface ListedDelivery {
  id: string;
  type: string;
  entityId: string;
  status: string;
  attempts: number;
  lastError: string | null;
  createdAt: number;
  deliveredAt: number | null;
}

export async function listDeliveries(baseUrl: string, apiKey: string, maxPages = 10_000): Promise<ListedDelivery[]> {
  const all: ListedDelivery[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < maxPages; page++) {
    const query: string = cursor ? `?limit=100&cursor=${encodeURIComponent(cursor)}` : '?limit=100';
    const result: { data: any[]; nextCursor: string | null } = await json(baseUrl, 'GET', `/api/v1/events${query}`, apiKey);
    all.push(...result.data);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return all;
}

export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Markdown-friendly distribution of millisecond samples. */
export function percentiles(samples: number[]): { count: number; p50: number; p95: number; p99: number; max: number; mean: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : NaN);
  const mean = sorted.length ? sorted.reduce((s, v) => s + v, 0) / sorted.length : NaN;
  return { count: sorted.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted.length ? sorted[sorted.length - 1] : NaN, mean };
}

export const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '–');
