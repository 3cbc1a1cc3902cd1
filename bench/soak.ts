/**
 * Soak test (npm run soak -- [minutes]): steady mixed traffic against the whole product in a child
 * process for a fixed time (default 30 minutes), sampling its resident memory every 10 s. Passes
 * when the error rate stays at or under 0.1 % and memory shows no growth trend: the slope of a
 * least-squares line through the samples after a warm-up is under SOAK_MAX_GROWTH_MIB_PER_H
 * (default 20 MiB per hour). Results go to stdout as Markdown for docs/reliability.md.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_TEMPLATE } from '../apps/api-gateway/src/demo-template';
import { windowConfiguration } from './configuration';
import { call } from './http-client';
import { startProcess } from './server-process';

const ADMIN_TOKEN = 'adm_soak_0123456789abcdefghij_padded_to_32_chars';
const MINUTES = Number(process.argv[2] ?? process.env.SOAK_MINUTES ?? 30);
const RATE_PER_S = Number(process.env.SOAK_RATE ?? 40);
const MAX_GROWTH_MIB_PER_H = Number(process.env.SOAK_MAX_GROWTH_MIB_PER_H ?? 20);


const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

async function run(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'soak-'));
  const port = 3900 + Math.floor(Math.random() * 90);
  const product = await startProcess(join(__dirname, '../apps/api-gateway/src/main.js'), [], {
    PORT: String(port),
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    SEED_DEMO: 'false',
    RATE_LIMIT_IP_PER_MIN: '0',
    RATE_LIMIT_KEY_PER_MIN: '0',
    RATE_LIMIT_CAPABILITY_PER_MIN: '0',
  }, port, '/healthz');
  const base = product.baseUrl;
  const slug = `soak-${Date.now().toString(36)}`;
  const org = await call(base, 'POST', '/admin/v1/organizations', ADMIN_TOKEN, { name: 'Soak Windows', slug });
  const apiKey = (await call(base, 'POST', `/admin/v1/organizations/${org.id}/api-keys`, ADMIN_TOKEN, { name: 'soak' })).key as string;
  const templateId = (await call(base, 'POST', `/admin/v1/organizations/${org.id}/templates`, ADMIN_TOKEN, DEMO_TEMPLATE)).id as string;

  let requests = 0;
  let errors = 0;
  const errorSamples: string[] = [];
  const request = async (method: string, path: string, token?: string, body?: unknown) => {
    requests++;
    try {
      return await call(base, method, path, token, body);
    } catch (error) {
      errors++;
      if (errorSamples.length < 10) errorSamples.push(String(error));
      return null;
    }
  };
  /** One step of a customer and an office worker: configure, submit, quote, send, read lists. */
  const step = async (i: number) => {
    switch (i % 5) {
      case 0: {
        const session = await request('POST', `/storefront/v1/${slug}/sessions`, undefined, { templateId });
        if (!session) return;
        await request('PUT', `/storefront/v1/sessions/${session.sessionId}/configuration`, session.customerToken, windowConfiguration(1000 + (i % 400)));
        const submitted = await request('POST', `/storefront/v1/sessions/${session.sessionId}/submit`, session.customerToken, { customer: { name: `Customer ${i}`, email: `s${i}@example.com` } });
        if (!submitted) return;
        const quote = await request('POST', `/api/v1/submissions/${submitted.submissionId}/quotes`, apiKey, {});
        if (quote) await request('POST', `/api/v1/quotes/${quote.quoteId}/send`, apiKey, { recipients: [`s${i}@example.com`] });
        return;
      }
      case 1:
        await request('POST', '/api/v1/contacts', apiKey, { email: `c${i % 2000}@example.com`, name: `Contact ${i}` });
        return;
      case 2:
        await request('GET', '/api/v1/quotes?limit=50', apiKey);
        return;
      case 3:
        await request('GET', '/api/v1/submissions?limit=50', apiKey);
        return;
      default:
        await request('POST', `/storefront/v1/${slug}/leads`, undefined, { name: `Lead ${i}`, email: `l${i}@example.com`, message: 'Call me' });
    }
  };

  const started = Date.now();
  const end = started + MINUTES * 60_000;
  const samples: Array<[number, number]> = [];
  const sampler = setInterval(() => samples.push([(Date.now() - started) / 3_600_000, rssMiB(product.child.pid!)]), 10_000);
  const inFlight = new Set<Promise<void>>();
  let i = 0;
  while (Date.now() < end) {
    const tick = Date.now();
    for (let k = 0; k < RATE_PER_S / 10; k++) {
      const p = step(i++).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 100 - (Date.now() - tick))));
  }
  await Promise.all(inFlight);
  clearInterval(sampler);
  await product.stop();
  rmSync(dataDir, { recursive: true, force: true });

  const warm = samples.filter(([hours]) => hours * 60 >= Math.min(5, MINUTES / 3));
  const growth = warm.length >= 3 ? slope(warm) : 0;
  const errorRate = requests === 0 ? 0 : errors / requests;
  const rss = samples.map(([, mib]) => mib);
  console.log(`| minutes | requests | errors | error rate | RSS first / min / max / last (MiB) | RSS trend after warm-up |`);
  console.log(`|---|---|---|---|---|---|`);
  console.log(
    `| ${MINUTES} | ${requests} | ${errors} | ${(errorRate * 100).toFixed(3)} % | ${rss[0]?.toFixed(0)} / ${Math.min(...rss).toFixed(0)} / ${Math.max(...rss).toFixed(0)} / ${rss[rss.length - 1]?.toFixed(0)} | ${growth.toFixed(1)} MiB/h |`,
  );
  const every5min = samples.filter((_, index) => index % 30 === 0).map(([hours, mib]) => `${Math.round(hours * 60)} min: ${mib.toFixed(0)} MiB`);
  console.log(`\nRSS every 5 minutes: ${every5min.join(', ')}`);
  for (const sample of errorSamples) console.error(`error: ${sample}`);
  const passed = errorRate <= 0.001 && growth < MAX_GROWTH_MIB_PER_H;
  console.log(passed ? 'PASS' : `FAIL (limits: error rate ≤ 0.1 %, growth < ${MAX_GROWTH_MIB_PER_H} MiB/h)`);
  if (!passed) process.exit(1);
}

run().catch((error) => {
  console.error(error);
  process.exit(1);
});
