/**
 * Live-pricing loop latency (issue 3): concurrent customer sessions against a partner in this
 * process, all over real loopback sockets to the embedded product in a child process.
 *
 * - leg A: the customer's `PUT /storefront/v1/sessions/{id}/configuration` is sent → the partner
 *   has received (and verified) the `pricing.calculated` for that session and configHash;
 * - leg B: the partner's `PUT {data.callback.url}` is sent → the customer's SSE stream
 *   (`event: session`) shows `pricing.source: "external"` for that configHash.
 *
 * Each session runs its rounds one after another (a new width each round, so a new configHash);
 * a round ends when both legs are seen or after ROUND_TIMEOUT_MS. Bounded by rounds and by a
 * deadline. Environment: BENCH_PRICING_SESSIONS (50), BENCH_PRICING_ROUNDS (20 measured),
 * BENCH_PRICING_WARMUP_ROUNDS (2, not measured), BENCH_PRICING_DEADLINE_S (180 per scenario),
 * BENCH_PRICING_THINK_MS (1000: a second scenario pauses 0.5–1.5 × this between a closed loop and
 * the next change; 0 skips it), BENCH_CPU_PROFILE_DIR (profile the gateway with node --cpu-prof).
 */
import { windowConfiguration } from './configuration';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { monotonicUs, summarizeCpuProfiles } from './cpu-profile-summary';
import { CpuMeter, cpuText, json, listDeliveries, loopWaits, ms, pause, percentiles, seedWebhookOrganization, startProduct } from './live-product';
import { SignedReceiver, type ReceivedDelivery } from './signed-receiver';
import { SseClient, type ServerSentEvent } from './sse-client';

const SESSIONS = Number(process.env.BENCH_PRICING_SESSIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_PRICING_ROUNDS ?? 20);
const WARMUP_ROUNDS = Number(process.env.BENCH_PRICING_WARMUP_ROUNDS ?? 2);
const DEADLINE_S = Number(process.env.BENCH_PRICING_DEADLINE_S ?? 180);
const THINK_MS = Number(process.env.BENCH_PRICING_THINK_MS ?? 1000);
/** `BENCH_PRICING_PACED_ONLY=1`: only the paced scenario (the one the target is judged on) */
const PACED_ONLY = process.env.BENCH_PRICING_PACED_ONLY === '1' && THINK_MS > 0;
const ROUND_TIMEOUT_MS = 10_000;
const PORT = 3911;
const MARKUP_PERCENT = 10;
/** widths 1210, 1220, … (the template allows up to 3000 mm) */
const MAX_ROUNDS = 170;


/** Moments keyed by `<sessionId>|<configHash>`, with waiters. */
class Moments {
  private readonly seen = new Map<string, number>();
  private readonly waiters = new Map<string, () => void>();

  record(key: string, at: number): void {
    if (this.seen.has(key)) return;
    this.seen.set(key, at);
    this.waiters.get(key)?.();
  }

  get(key: string): number | undefined {
    return this.seen.get(key);
  }

  /** The moment, or undefined when it did not come within timeoutMs. */
  async wait(key: string, timeoutMs: number): Promise<number | undefined> {
    if (this.seen.has(key)) return this.seen.get(key);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.set(key, done);
    });
    this.waiters.delete(key);
    return this.seen.get(key);
  }
}

interface Scenario {
  label: string;
  sessions: number;
  rounds: number;
  /** pause between a round's end and the next change: uniform in [0.5, 1.5] × thinkMs (0: none) */
  thinkMs: number;
  port: number;
}

interface ScenarioResult {
  legA: number[];
  legB: number[];
  loop: number[];
  putConfiguration: number[];
  /** leg A / leg B by measured round index (0 = first measured round) */
  legAByRound: number[][];
  legBByRound: number[][];
  /** leg A in three stages: PUT sent → domain event recorded; → delivery record created (outbox); → partner has it */
  stages: number[][];
  /** how long a setImmediate waited in the gateway during the measured rounds (bench/loop-probe.ts) */
  loopWaits: number[];
  measuredRounds: number;
  seconds: number;
  cpu: string;
  notes: string;
  profile: string[];
}

export async function benchPricingLoop(): Promise<string[]> {
  const scenarios: Scenario[] = [];
  if (!PACED_ONLY) scenarios.push({ label: 'back to back (each session changes again as soon as its loop is closed)', sessions: SESSIONS, rounds: ROUNDS, thinkMs: 0, port: PORT });
  if (THINK_MS > 0) scenarios.push({ label: `paced (${THINK_MS / 2}–${(THINK_MS * 3) / 2} ms, uniform, between a closed loop and the next change)`, sessions: SESSIONS, rounds: ROUNDS, thinkMs: THINK_MS, port: PORT + 1 });
  const results: Array<[Scenario, ScenarioResult]> = [];
  for (const scenario of scenarios) results.push([scenario, await runScenario(scenario)]);

  const row = (name: string, samples: number[]) => {
    const p = percentiles(samples);
    return `| ${name} | ${p.count} | ${ms(p.p50)} | ${ms(p.p95)} | ${ms(p.p99)} | ${ms(p.max)} | ${ms(p.mean)} |`;
  };
  const lines = [
    `### Live-pricing loop, ${SESSIONS} concurrent sessions`,
    '',
    `${SESSIONS} customer sessions, each with its SSE stream open (\`GET /storefront/v1/sessions/{id}/stream\`), ${ROUNDS} measured configuration ` +
      `changes each (a new width each time), one after another, after ${WARMUP_ROUNDS} warm-up rounds that are not counted. The partner ` +
      `(this process, 127.0.0.1) verifies X-Service-Signature, answers 200 and PUTs a ${MARKUP_PERCENT} % markup to data.callback.url at once. ` +
      'Leg A: configuration PUT sent → the partner has the matching pricing.calculated; leg B: the partner\'s PUT sent → `event: session` ' +
      'with pricing.source external for that configHash on the customer\'s stream. Fresh gateway and data directory per scenario.',
    '',
  ];
  for (const [scenario, r] of results) {
    const q = (rows: number[][], from: number, to: number) => percentiles(rows.slice(from, to).flat()).p50;
    const n = r.legAByRound.length;
    lines.push(
      `#### ${scenario.label}`,
      '',
      `${r.measuredRounds} measured rounds in ${r.seconds.toFixed(1)} s (${(r.measuredRounds / r.seconds).toFixed(0)} loops/s). CPU: ${r.cpu}.`,
      '',
      '| leg | count | p50 ms | p95 ms | p99 ms | max ms | mean ms |',
      '|---|---|---|---|---|---|---|',
      row('A: configuration PUT sent → partner has pricing.calculated', r.legA),
      row('B: partner PUT sent → SSE shows source external', r.legB),
      row('whole loop: configuration PUT sent → SSE external', r.loop),
      row('(customer) configuration PUT response time', r.putConfiguration),
      row('A1: PUT sent → configurationChanged recorded (envelope timestamp)', r.stages[0]),
      row('A2: recorded → delivery record created (outbox relay, bus, reactor)', r.stages[1]),
      row('A3: record created → partner has it (claim, token, sign, send)', r.stages[2]),
      row('(gateway) wait of a setImmediate, i.e. one event-loop turn, sampled every 20 ms', r.loopWaits),
      '',
      `Target p99 ≤ 25 ms per leg: leg A ${verdict(percentiles(r.legA).p99, 25)}, leg B ${verdict(percentiles(r.legB).p99, 25)}. ` +
        `p50 of leg A in the first / last 5 measured rounds: ${ms(q(r.legAByRound, 0, 5))} / ${ms(q(r.legAByRound, n - 5, n))} ms; ` +
        `leg B: ${ms(q(r.legBByRound, 0, 5))} / ${ms(q(r.legBByRound, n - 5, n))} ms.`,
      r.notes,
      '',
      ...r.profile,
    );
  }
  return lines;
}

async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  const rounds = Math.min(scenario.rounds + WARMUP_ROUNDS, MAX_ROUNDS);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-pricing-'));
  const profileDir = process.env.BENCH_CPU_PROFILE_DIR ? join(process.env.BENCH_CPU_PROFILE_DIR, `pricing-${scenario.thinkMs ? 'paced' : 'back-to-back'}-${Date.now()}`) : undefined;
  const product = await startProduct({ dataDir, port: scenario.port, cpuProfileDir: profileDir });

  const received = new Moments(); // leg A end: the partner has the event
  const answered = new Moments(); // leg B start: the partner's PUT is sent
  const shown = new Moments(); // leg B end: the customer's stream shows the external price
  const deliveryIds = new Map<string, number>();
  /** per `<session>|<hash>`: wall-clock receipt, the domain event's recordedAt (envelope timestamp), the delivery id */
  const wallOf = new Map<string, { receivedAt: number; recordedAt: number; deliveryId: string }>();
  /** per measured `<session>|<hash>`: wall clock when the configuration PUT was sent */
  const sentWall = new Map<string, number>();
  const callbackStatuses = new Map<number, number>();
  let otherEvents = 0;
  let callbackErrors = 0;

  const partner = new SignedReceiver((delivery: ReceivedDelivery) => {
    deliveryIds.set(delivery.deliveryId, (deliveryIds.get(delivery.deliveryId) ?? 0) + 1);
    if (delivery.body.event !== 'pricing.calculated') {
      otherEvents++;
      return;
    }
    const { session, configHash, basePricing, callback } = delivery.body.data;
    const key = `${session.id}|${configHash}`;
    received.record(key, delivery.at);
    if (!wallOf.has(key)) wallOf.set(key, { receivedAt: Date.now(), recordedAt: Date.parse(delivery.body.timestamp), deliveryId: delivery.deliveryId });
    // The partner's price: the base breakdown with a markup, PUT to the capability URL at once.
    const lineItems = basePricing.lineItems.map((item: any) => ({
      description: item.description,
      quantity: item.quantity,
      unitPrice: Math.round(item.unitPrice * (100 + MARKUP_PERCENT)) / 100,
      ...(item.itemType !== undefined && { itemType: item.itemType }),
      ...(item.itemKey !== undefined && { itemKey: item.itemKey }),
    }));
    const body = JSON.stringify({ configHash, lineItems });
    answered.record(key, performance.now());
    fetch(callback.url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body })
      .then(async (res) => {
        await res.arrayBuffer();
        callbackStatuses.set(res.status, (callbackStatuses.get(res.status) ?? 0) + 1);
      })
      .catch(() => callbackErrors++);
  });
  const streams: SseClient[] = [];

  try {
    const receiverUrl = await partner.start();
    const org = await seedWebhookOrganization(product.baseUrl, {
      webhookUrl: receiverUrl,
      pricingWebhookUrl: receiverUrl,
      externalPricingEnabled: true,
      pricingTimeoutMs: 10_000,
    });
    partner.secret = org.secret;

    const sessions: Array<{ id: string; token: string }> = [];
    for (let i = 0; i < scenario.sessions; i++) {
      const started = await json(product.baseUrl, 'POST', `/storefront/v1/${org.slug}/sessions`, undefined, { templateId: org.templateId });
      sessions.push({ id: started.sessionId, token: started.customerToken });
    }
    let streamEvents = 0;
    for (const session of sessions) {
      const stream = await SseClient.open(`${product.baseUrl}/storefront/v1/sessions/${session.id}/stream`, { authorization: `Bearer ${session.token}` }, (event: ServerSentEvent) => {
        streamEvents++;
        if (event.event === 'session' && event.data.pricing?.source === 'external') shown.record(`${session.id}|${event.data.configHash}`, event.at);
      });
      if (stream.status !== 200) throw new Error(`stream of ${session.id} answered ${stream.status}`);
      streams.push(stream);
    }
    for (let waited = 0; streamEvents < scenario.sessions && waited < 10_000; waited += 10) await pause(10);

    const result: ScenarioResult = {
      legA: [], legB: [], loop: [], putConfiguration: [], legAByRound: [], legBByRound: [], stages: [[], [], []], loopWaits: [],
      measuredRounds: 0, seconds: 0, cpu: '', notes: '', profile: [],
    };
    let missingA = 0;
    let missingB = 0;
    const deadline = performance.now() + DEADLINE_S * 1000;
    const started = performance.now();
    const startedUs = monotonicUs();
    const meter = new CpuMeter(product);

    await Promise.all(
      sessions.map(async (session) => {
        for (let round = 0; round < rounds && performance.now() < deadline; round++) {
          if (scenario.thinkMs > 0) await pause(scenario.thinkMs * (0.5 + Math.random()));
          const t0 = performance.now();
          const t0Wall = Date.now();
          const res = await fetch(`${product.baseUrl}/storefront/v1/sessions/${session.id}/configuration`, {
            method: 'PUT',
            headers: { authorization: `Bearer ${session.token}`, 'content-type': 'application/json' },
            body: JSON.stringify(windowConfiguration(1200 + (round + 1) * 10)),
          });
          const view = (await res.json()) as { configHash: string };
          const tPut = performance.now();
          if (res.status !== 200) throw new Error(`PUT configuration → ${res.status}: ${JSON.stringify(view)}`);
          const key = `${session.id}|${view.configHash}`;
          const a = await received.wait(key, ROUND_TIMEOUT_MS);
          const b = a === undefined ? undefined : await shown.wait(key, ROUND_TIMEOUT_MS);
          if (round < WARMUP_ROUNDS) continue;
          const measured = round - WARMUP_ROUNDS;
          result.measuredRounds++;
          result.putConfiguration.push(tPut - t0);
          if (a === undefined) {
            missingA++;
            continue;
          }
          result.legA.push(a - t0);
          sentWall.set(key, t0Wall);
          (result.legAByRound[measured] ??= []).push(a - t0);
          if (b === undefined) {
            missingB++;
            continue;
          }
          result.legB.push(b - answered.get(key)!);
          (result.legBByRound[measured] ??= []).push(b - answered.get(key)!);
          result.loop.push(b - t0);
        }
      }),
    );
    result.seconds = (performance.now() - started) / 1000;
    const endedUs = monotonicUs();
    result.cpu = cpuText(meter.read());

    // Every pricing.calculated is in the delivery log as delivered.
    await pause(500);
    const log = await listDeliveries(product.baseUrl, org.apiKey);
    const pricingLog = log.filter((d) => d.type === 'pricing.calculated');
    const byStatus = new Map<string, number>();
    for (const d of pricingLog) byStatus.set(d.status, (byStatus.get(d.status) ?? 0) + 1);
    const duplicates = [...deliveryIds.values()].reduce((sum, n) => sum + n - 1, 0);
    const notReceived = pricingLog.filter((d) => !deliveryIds.has(d.id)).length;
    // Leg A by stage (wall clock, ms resolution; both processes read the same clock).
    const createdAt = new Map(pricingLog.map((d) => [d.id, d.createdAt]));
    const stages: number[][] = [[], [], []];
    for (const [key, t0Wall] of sentWall) {
      const wall = wallOf.get(key);
      const created = wall && createdAt.get(wall.deliveryId);
      if (!wall || created === undefined) continue;
      stages[0].push(wall.recordedAt - t0Wall);
      stages[1].push(created - wall.recordedAt);
      stages[2].push(wall.receivedAt - created);
    }
    result.stages = stages;
    const rss = product.peakRssMiB();
    await pause(1_100); // the probe writes its samples once a second
    result.loopWaits = loopWaits(product.loopProbeFile, startedUs, endedUs);
    for (const stream of streams) stream.close();
    await product.stop();
    result.notes =
      `Rounds without the webhook within ${ROUND_TIMEOUT_MS / 1000} s: ${missingA}; without the SSE event: ${missingB}. ` +
      `Signatures refused: ${partner.badSignatures}. Callback PUT statuses: ${[...callbackStatuses].map(([s, n]) => `${s}×${n}`).join(', ') || 'none'}` +
      `${callbackErrors ? `, transport errors ${callbackErrors}` : ''}. Other events: ${otherEvents}. ` +
      `Delivery log: ${pricingLog.length} pricing.calculated (${[...byStatus].map(([s, n]) => `${s} ${n}`).join(', ')}), ` +
      `${notReceived} of them never received, ${duplicates} duplicate arrivals. Peak RSS of the gateway: ${rss} MiB.`;
    if (profileDir) {
      result.profile = summarizeCpuProfiles(product.cpuProfiles(), `gateway CPU profile (${scenario.thinkMs ? 'paced' : 'back to back'})`, 15, [
        { label: 'measured rounds', fromUs: startedUs, toUs: endedUs },
      ]);
    }
    return result;
  } finally {
    for (const stream of streams) stream.close();
    await product.stop();
    await partner.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function verdict(value: number, target: number): string {
  return Number.isFinite(value) && value <= target ? `met (${ms(value)} ms)` : `**missed** (${ms(value)} ms)`;
}

if (require.main === module) {
  benchPricingLoop()
    .then((lines) => process.stdout.write(`${lines.join('\n')}\n`))
    .catch((error) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    });
}
