/**
 * Benchmarks of the external API (npm run bench). Each server runs in its own child process and
 * autocannon drives it from this one, all on loopback. Figures go to stdout as Markdown.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { seedOrganization, seedQuotes, startGateway, waitUntilIdle } from './seed';
import { startProcess } from './server-process';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const QUOTES = Number(process.env.BENCH_QUOTES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_QUOTE_LIST_ROUNDS ?? 3);

/** The product under test inherits this environment: MONGODB_URL / KAFKA_BROKERS / EVENTSTORE_URL switch it to the real engines. */
const ENGINES = ['EVENTSTORE_URL', 'MONGODB_URL', 'KAFKA_BROKERS'].filter((name) => process.env[name]).map((name) => `${name}=${process.env[name]}`);

function run(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon(options, (error, result) => (error ? reject(error) : resolve(result))));
}

async function benchQuoteList(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-quotes-'));
  const gateway = await startGateway(dataDir, 3901);
  try {
    const seed = await seedOrganization(gateway.baseUrl);
    const started = Date.now();
    await seedQuotes(gateway.baseUrl, seed, QUOTES);
    const seedSeconds = (Date.now() - started) / 1000;
    const idleSeconds = await waitUntilIdle(gateway.child.pid!);
    const path = '/api/v1/quotes?limit=50';
    const page = await fetch(gateway.baseUrl + path, { headers: { authorization: `Bearer ${seed.apiKey}` } }).then((r) => r.text());
    const payloadFile = join(dataDir, 'page.json');
    writeFileSync(payloadFile, page);

    const options = { connections: 10, duration: DURATION_S, headers: { authorization: `Bearer ${seed.apiKey}` } };
    const bare = await startProcess(join(__dirname, 'bare-fastify.js'), [payloadFile, '3902'], {}, 3902, '/api/v1/quotes');
    try {
      await run({ ...options, url: gateway.baseUrl + path, duration: 2 });
      await run({ ...options, url: bare.baseUrl + path, duration: 2 });
      // Product and bare server take turns, so a change in the machine's speed during the run
      // (a shared VM's neighbours) weighs on both sides of each ratio instead of on one server.
      const rounds: Array<{ product: autocannon.Result; baseline: autocannon.Result }> = [];
      for (let round = 0; round < ROUNDS; round++) {
        const product = await run({ ...options, url: gateway.baseUrl + path });
        const baseline = await run({ ...options, url: bare.baseUrl + path });
        rounds.push({ product, baseline });
      }
      const rss = gateway.peakRssMiB();
      const ratios = rounds.map(({ product, baseline }) => product.requests.average / baseline.requests.average);
      const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)];
      return [
        `### GET /api/v1/quotes?limit=50 with ${QUOTES} quotes in the store`,
        '',
        `Seeded through the public API in ${seedSeconds.toFixed(1)} s; the product finished the work seeding left (a PDF per quote) ${idleSeconds.toFixed(0)} s later. 10 connections, ${DURATION_S} s per run after a 2 s warm-up of each server; ${ROUNDS} rounds, each the product then the bare server.`,
        '',
        '| round | server | req/s | p50 ms | p99 ms | non-2xx | ratio |',
        '|---|---|---|---|---|---|---|',
        ...rounds.flatMap(({ product, baseline }, i) => [
          `| ${i + 1} | product (${ENGINES.length > 0 ? 'real engines' : 'embedded'}) | ${product.requests.average.toFixed(0)} | ${product.latency.p50} | ${product.latency.p99} | ${product.non2xx} | ${ratios[i].toFixed(2)} |`,
          `| ${i + 1} | bare Fastify, same payload | ${baseline.requests.average.toFixed(0)} | ${baseline.latency.p50} | ${baseline.latency.p99} | ${baseline.non2xx} | |`,
        ]),
        '',
        `Ratio product / bare, median of ${ROUNDS} rounds: **${median.toFixed(2)}** (target ≥ 0.6; lowest ${Math.min(...ratios).toFixed(2)}). Peak RSS of the product: ${rss} MiB.`,
        '',
      ];
    } finally {
      await bare.stop();
    }
  } finally {
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function benchContactUpserts(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-contacts-'));
  const gateway = await startGateway(dataDir, 3903);
  try {
    const seed = await seedOrganization(gateway.baseUrl);
    const request = {
      url: `${gateway.baseUrl}/api/v1/contacts`,
      method: 'POST' as const,
      headers: { authorization: `Bearer ${seed.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench-[<id>]@example.com', name: 'Bench Contact', companyName: 'Bench Ltd' }),
      idReplacement: true,
    };
    await run({ ...request, connections: 20, duration: 2 });
    const max = await run({ ...request, connections: 50, duration: DURATION_S });
    const halfRate = Math.floor(max.requests.average / 2);
    const half = await run({ ...request, connections: 20, duration: DURATION_S, overallRate: halfRate });
    const rss = gateway.peakRssMiB();
    return [
      '### POST /api/v1/contacts (a new e-mail each request)',
      '',
      '| load | req/s | p50 ms | p99 ms | errors + non-2xx |',
      '|---|---|---|---|---|',
      `| maximum (50 connections, ${DURATION_S} s) | ${max.requests.average.toFixed(0)} | ${max.latency.p50} | ${max.latency.p99} | ${max.errors + max.non2xx} |`,
      `| half the maximum (${halfRate} req/s) | ${half.requests.average.toFixed(0)} | ${half.latency.p50} | ${half.latency.p99} | ${half.errors + half.non2xx} |`,
      '',
      `Targets: ≥ 1,500 req/s, p99 ≤ 20 ms at half the maximum rate. Peak RSS of the gateway: ${rss} MiB.`,
      '',
    ];
  } finally {
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const only = process.argv[2];
  const mode = ENGINES.length > 0 ? `real engines: ${ENGINES.join(', ')}` : 'embedded mode';
  const lines = [`## Run of ${new Date().toISOString()} (${mode}, Node ${process.version})`, ''];
  if (!only || only === 'quotes') lines.push(...(await benchQuoteList()));
  if (!only || only === 'contacts') lines.push(...(await benchContactUpserts()));
  if (!only || only === 'pricing') lines.push(...(await (await import('./pricing-loop')).benchPricingLoop()));
  if (!only || only === 'dispatch') lines.push(...(await (await import('./dispatch')).benchDispatch()));
  if (!only || only === 'dispatch' || only === 'dispatch-backlog') lines.push(...(await (await import('./dispatch')).benchDispatchBacklog()));
  if (!only || only === 'rebuild') lines.push(...(await (await import('./operations')).benchRebuild()));
  // Not part of a whole run: it generates and rebuilds its own store, and is an analysis rather than a target.
  if (only === 'rebuild-floor') lines.push(...(await (await import('./rebuild-floor')).benchRebuildFloor()));
  if (!only || only === 'audit') lines.push(...(await (await import('./operations')).benchAudit()));
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
