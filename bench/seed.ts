/**
 * Benchmark data seeded through the public API, and the wait for the work it leaves behind.
 * `node dist/bench/seed.js <dataDir> [quotes]` seeds a data directory once, for profiling the
 * gateway by hand against the same store.
 */
import { join } from 'node:path';
import { DEMO_TEMPLATE } from '../apps/api-gateway/src/demo-template';
import { windowConfiguration } from './configuration';
import { call, inParallel, StoredButLagging } from './http-client';
import { cpuSeconds, startProcess, type ServerProcess } from './server-process';

export const BENCH_ADMIN_TOKEN = 'adm_bench_0123456789abcdefghij_padded_to_32_chars';

export interface SeededOrganization {
  org: { id: string };
  slug: string;
  apiKey: string;
  templateId: string;
}

/** The product as the benchmarks run it: a fresh data directory, the bench admin token, no demo, no rate limits. */
export function benchProductEnv(dataDir: string, port: number): Record<string, string> {
  return {
    PORT: String(port),
    DATA_DIR: dataDir,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    SEED_DEMO: 'false',
    RATE_LIMIT_IP_PER_MIN: '0',
    RATE_LIMIT_KEY_PER_MIN: '0',
    RATE_LIMIT_CAPABILITY_PER_MIN: '0',
  };
}

export async function startGateway(dataDir: string, port: number, extraEnv: Record<string, string> = {}): Promise<ServerProcess> {
  return startProcess(join(__dirname, '../apps/api-gateway/src/main.js'), [], { ...benchProductEnv(dataDir, port), ...extraEnv }, port, '/healthz');
}

export async function seedOrganization(baseUrl: string): Promise<SeededOrganization> {
  const slug = `bench-${Date.now()}`;
  const org = await call(baseUrl, 'POST', '/admin/v1/organizations', BENCH_ADMIN_TOKEN, { name: 'Bench Windows', slug, settings: { quoteDefaults: { taxRate: 21 } } });
  const key = await call(baseUrl, 'POST', `/admin/v1/organizations/${org.id}/api-keys`, BENCH_ADMIN_TOKEN, { name: 'bench' });
  const template = await call(baseUrl, 'POST', `/admin/v1/organizations/${org.id}/templates`, BENCH_ADMIN_TOKEN, DEMO_TEMPLATE);
  return { org, slug, apiKey: key.key as string, templateId: template.id as string };
}

/** `count` draft quotes over count/100 submissions, each through the public API. */
export async function seedQuotes(baseUrl: string, seed: SeededOrganization, count: number): Promise<void> {
  const submissions = Math.max(1, Math.ceil(count / 100));
  const submissionIds: string[] = [];
  // A networked read store applies the seeding writes more slowly: fewer at once keeps each write within its read-your-writes wait.
  const concurrency = process.env.MONGODB_URL ? 2 : 8;
  await inParallel(submissions, concurrency, async (i) => {
    const session = await call(baseUrl, 'POST', `/storefront/v1/${seed.slug}/sessions`, undefined, { templateId: seed.templateId });
    const auth = session.customerToken;
    await call(baseUrl, 'PUT', `/storefront/v1/sessions/${session.sessionId}/configuration`, auth, windowConfiguration());
    const submitted = await call(baseUrl, 'POST', `/storefront/v1/sessions/${session.sessionId}/submit`, auth, { customer: { name: `Customer ${i}`, email: `customer${i}@example.com` } });
    submissionIds.push(submitted.submissionId);
  });
  let done = 0;
  await inParallel(count, concurrency * 2, async (i) => {
    try {
      await call(baseUrl, 'POST', `/api/v1/submissions/${submissionIds[i % submissionIds.length]}/quotes`, seed.apiKey, { reference: `bench ${i}` });
    } catch (error) {
      if (!(error instanceof StoredButLagging)) throw error;
    }
    if (++done % 1000 === 0) process.stderr.write(`  seeded ${done} quotes\n`);
  });
}

/**
 * Waits until the process has used under 5 % of a core for two seconds in a row: seeding leaves
 * work behind in the product (a PDF for every quote created, webhooks), which must not be
 * measured as the cost of the requests that follow. Gives up after `timeoutMs` and says so.
 */
export async function waitUntilIdle(pid: number, timeoutMs = 600_000): Promise<number> {
  const started = Date.now();
  let quiet = 0;
  let previous = cpuSeconds(pid);
  while (Date.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = cpuSeconds(pid);
    quiet = now - previous <= 0.05 ? quiet + 1 : 0;
    previous = now;
    if (quiet >= 2) return (Date.now() - started) / 1000;
  }
  process.stderr.write(`  the product was still busy after ${timeoutMs / 1000} s; measuring anyway\n`);
  return (Date.now() - started) / 1000;
}

async function main(): Promise<void> {
  const [dataDir, quotes = '10000'] = process.argv.slice(2);
  if (!dataDir) throw new Error('usage: node dist/bench/seed.js <dataDir> [quotes]');
  const gateway = await startGateway(dataDir, 3931);
  try {
    const seed = await seedOrganization(gateway.baseUrl);
    await seedQuotes(gateway.baseUrl, seed, Number(quotes));
    const idle = await waitUntilIdle(gateway.child.pid!);
    process.stdout.write(`${JSON.stringify({ ...seed, idleAfterSeconds: idle })}\n`);
  } finally {
    await gateway.stop();
  }
}

if (require.main === module) {
  main().catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
