/**
 * Webhook dispatch throughput (issue 3): storefront leads created as fast as the API takes them,
 * each one a `lead.created` delivery to a receiver in this process (127.0.0.1) that verifies
 * X-Service-Signature. Measured from the receiver's side: deliveries per second over the steady
 * part of the run, and no loss — every lead's delivery arrives at least once (duplicates counted
 * apart) and GET /api/v1/events shows every record delivered.
 *
 * Two runs. Live: the leads are created while the outbox runs, so the delivery rate can be no
 * higher than the rate at which the API takes the writes. Backlog: the leads are written while no
 * outbox runs (the gateway and the projector as processes of their own), then the whole product
 * starts on the same data and its outbox catches up from its checkpoint: the rate of the outbox
 * itself, as after an outage of the outbox or of the receiver.
 *
 * Bounded by count and time. Environment: BENCH_DISPATCH_LEADS (20000), BENCH_DISPATCH_BACKLOG
 * (20000 leads), BENCH_DISPATCH_CLIENTS (64 requests in flight), BENCH_DISPATCH_DEADLINE_S (180,
 * for creating; draining gets 60 s more), BENCH_CPU_PROFILE_DIR (profile the gateway with node
 * --cpu-prof, live run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { monotonicUs, summarizeCpuProfiles } from './cpu-profile-summary';
import { CpuMeter, cpuText, listDeliveries, loopWaits, ms, pause, percentiles, seedWebhookOrganization, startProduct, type ListedDelivery, type ProductProcess } from './live-product';
import { benchProductEnv } from './seed';
import { startProcess } from './server-process';
import { SignedReceiver } from './signed-receiver';

const LEADS = Number(process.env.BENCH_DISPATCH_LEADS ?? 20_000);
const BACKLOG = Number(process.env.BENCH_DISPATCH_BACKLOG ?? 20_000);
const CLIENTS = Number(process.env.BENCH_DISPATCH_CLIENTS ?? 64);
const DEADLINE_S = Number(process.env.BENCH_DISPATCH_DEADLINE_S ?? 180);
const DRAIN_S = 60;
/** the drain is over when nothing new arrived for this long */
const STALL_MS = 15_000;
const PORT = 3915;

export async function benchDispatch(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-dispatch-'));
  const profileDir = process.env.BENCH_CPU_PROFILE_DIR ? join(process.env.BENCH_CPU_PROFILE_DIR, `dispatch-${Date.now()}`) : undefined;
  const product = await startProduct({ dataDir, port: PORT, cpuProfileDir: profileDir });

  const receiver = new LeadReceiver();
  const { firstArrival } = receiver;

  try {
    const org = await seedWebhookOrganization(product.baseUrl, { webhookUrl: await receiver.start() });
    receiver.secret = org.secret;

    const createStart = performance.now();
    const createStartWall = Date.now();
    const createStartUs = monotonicUs();
    const creatingMeter = new CpuMeter(product);
    const { leadIds, failures, requestMs } = await createLeads(product.baseUrl, org.slug, LEADS);
    const createEnd = performance.now();
    const createEndWall = Date.now();
    const createEndUs = monotonicUs();
    const cpuCreating = cpuText(creatingMeter.read());
    const drainingMeter = new CpuMeter(product);
    const receivedWhenCreated = firstArrival.size;

    // Drain: until every lead's delivery arrived, nothing new came for STALL_MS, or DRAIN_S passed.
    const drainDeadline = performance.now() + DRAIN_S * 1000;
    while (firstArrival.size < leadIds.size && performance.now() < drainDeadline && performance.now() - Math.max(receiver.lastArrival, createEnd) < STALL_MS) await pause(50);
    const drainEnd = performance.now();
    const drainEndUs = monotonicUs();
    const cpuDraining = cpuText(drainingMeter.read());

    const log = await settledDeliveryLog(product.baseUrl, org.apiKey);
    const rss = product.peakRssMiB();
    await pause(1_100); // the probe writes its samples once a second
    const waitsCreating = percentiles(loopWaits(product.loopProbeFile, createStartUs, createEndUs));
    const waitsDraining = percentiles(loopWaits(product.loopProbeFile, createEndUs, drainEndUs));
    await product.stop();

    const { times, n, first, last, steadyRate, steadyWindowS, perSecondText } = arrivalStats(firstArrival);
    const afterCreation = times.filter((t) => t > createEnd);
    const drainRate = afterCreation.length > 1 ? afterCreation.length / ((afterCreation[afterCreation.length - 1] - createEnd) / 1000) : NaN;
    const loss = lossReport(receiver, leadIds, log);
    const { leadLog } = loss;
    // From the log (wall clock): how far the outbox had got while the leads were being created.
    const recordsWhileCreating = leadLog.filter((d) => d.createdAt <= createEndWall).length;
    const deliveredWhileCreating = leadLog.filter((d) => d.deliveredAt !== null && d.deliveredAt <= createEndWall).length;
    const lastRecordCreated = Math.max(...leadLog.map((d) => d.createdAt));
    const createSeconds = (createEnd - createStart) / 1000;
    const requests = percentiles(requestMs);

    const lines = [
      `### Webhook dispatch to a local receiver (lead.created)`,
      '',
      `${leadIds.size} storefront leads created (POST /storefront/v1/{slug}/leads, ${CLIENTS} requests in flight) in ${createSeconds.toFixed(1)} s ` +
        `= ${(leadIds.size / createSeconds).toFixed(0)} leads/s (request p50 ${requests.p50.toFixed(1)} ms, p99 ${requests.p99.toFixed(1)} ms, ${failures} failed). ` +
        `Each yields one lead.created to a receiver in the benchmark process (127.0.0.1) that verifies X-Service-Signature and answers 200.`,
      '',
      '| measure | value |',
      '|---|---|',
      `| deliveries received (unique X-Service-Delivery) | ${n} |`,
      `| first → last delivery | ${((last - first) / 1000).toFixed(1)} s, ${(n / ((last - first) / 1000)).toFixed(0)} deliveries/s |`,
      `| **sustained: steady window (10th → 90th percentile arrival)** | **${steadyRate.toFixed(0)} deliveries/s** over ${steadyWindowS.toFixed(1)} s |`,
      `| per whole second in that window: min / p50 / max | ${perSecondText} |`,
      `| received by the time the last lead was created | ${receivedWhenCreated} (backlog ${leadIds.size - receivedWhenCreated}) |`,
      `| after the last lead was created | ${afterCreation.length} deliveries in ${afterCreation.length ? ((afterCreation[afterCreation.length - 1] - createEnd) / 1000).toFixed(1) : 0} s (${Number.isFinite(drainRate) ? drainRate.toFixed(0) : '–'} /s) |`,
      `| delivery records created (outbox reactor) / delivered while the leads were being created | ${recordsWhileCreating} / ${deliveredWhileCreating} of ${leadIds.size} (${(deliveredWhileCreating / createSeconds).toFixed(0)} deliveries/s) |`,
      `| CPU while creating | ${cpuCreating} |`,
      `| CPU while draining | ${cpuDraining} |`,
      `| gateway event-loop turn (setImmediate wait, sampled every 20 ms) p50 / p99 / max, creating | ${ms(waitsCreating.p50)} / ${ms(waitsCreating.p99)} / ${ms(waitsCreating.max)} ms |`,
      `| same, draining | ${ms(waitsDraining.p50)} / ${ms(waitsDraining.p99)} / ${ms(waitsDraining.max)} ms |`,
      `| last delivery record created | ${((lastRecordCreated - createStartWall) / 1000).toFixed(1)} s after the first lead was sent (creation took ${createSeconds.toFixed(1)} s) |`,
      ...loss.rows,
      '',
      `Target ≥ 1,000 deliveries/s sustained: steady window ${steadyRate >= 1000 ? 'met' : '**missed**'} (${steadyRate.toFixed(0)}/s); ` +
        `while the API was taking the writes ${deliveredWhileCreating / createSeconds >= 1000 ? 'met' : '**missed**'} (${(deliveredWhileCreating / createSeconds).toFixed(0)}/s). ` +
        `No loss: ${loss.noLoss ? 'yes' : '**no**'}. ` +
        `Drain waited ${((drainEnd - createEnd) / 1000).toFixed(1)} s after creation. Peak RSS of the gateway: ${rss} MiB.`,
      '',
    ];
    if (profileDir) {
      lines.push(
        ...summarizeCpuProfiles(product.cpuProfiles(), 'gateway CPU profile (dispatch)', 15, [
          { label: 'while the leads were being created', fromUs: createStartUs, toUs: createEndUs },
          { label: 'draining after the last lead', fromUs: createEndUs, toUs: drainEndUs },
        ]),
      );
    }
    return lines;
  } finally {
    await product.stop();
    await receiver.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The backlog run: BACKLOG leads written with no outbox running, then the whole product started on
 * the same data; the outbox starts from its checkpoint with every lead.created still to deliver.
 */
export async function benchDispatchBacklog(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-dispatch-backlog-'));
  const receiver = new LeadReceiver();
  const { firstArrival } = receiver;
  const projector = await startProcess(join(__dirname, '../apps/projector/src/main.js'), [], { ...benchProductEnv(dataDir, PORT), HOST: '127.0.0.1', OPS_PORT: String(PORT + 1) }, PORT + 1, '/healthz');
  let writer: ProductProcess | null = null;
  let product: ProductProcess | null = null;
  try {
    // Writing, without an outbox: a gateway on its own (its reads wait for the projector process).
    writer = await startProduct({ dataDir, port: PORT, args: ['--only-gateway'] });
    const org = await seedWebhookOrganization(writer.baseUrl, { webhookUrl: await receiver.start() });
    receiver.secret = org.secret;
    const createStart = performance.now();
    const { leadIds, failures } = await createLeads(writer.baseUrl, org.slug, BACKLOG);
    const createSeconds = (performance.now() - createStart) / 1000;
    await writer.stop();
    await projector.stop();
    const arrivedEarly = firstArrival.size;

    // Catching up: the whole product, as `npm start` runs it, on the same data.
    const startAt = performance.now();
    product = await startProduct({ dataDir, port: PORT });
    const listening = performance.now();
    const meter = new CpuMeter(product);
    const deadline = performance.now() + (DRAIN_S + BACKLOG / 1000) * 1000;
    while (firstArrival.size < leadIds.size && performance.now() < deadline && performance.now() - Math.max(receiver.lastArrival, listening) < STALL_MS) await pause(50);
    const drainEnd = performance.now();
    const cpu = cpuText(meter.read());
    const log = await settledDeliveryLog(product.baseUrl, org.apiKey);
    const rss = product.peakRssMiB();
    await product.stop();

    const { n, first, last, steadyRate, steadyWindowS, perSecondText } = arrivalStats(firstArrival);
    const loss = lossReport(receiver, leadIds, log);
    const overall = n / ((last - startAt) / 1000);
    return [
      `### Webhook dispatch from a backlog (lead.created, outbox catching up)`,
      '',
      `${leadIds.size} storefront leads created in ${createSeconds.toFixed(1)} s (${failures} failed) by a gateway started with --only-gateway and a projector process: ` +
        `no outbox ran. Then the whole product (\`npm start\`'s process) started on the same DATA_DIR, and its outbox delivered the backlog from its checkpoint ` +
        `to the same receiver (127.0.0.1, verifies X-Service-Signature, answers 200).`,
      '',
      '| measure | value |',
      '|---|---|',
      `| deliveries received before the outbox ran | ${arrivedEarly} |`,
      `| deliveries received (unique X-Service-Delivery) | ${n} |`,
      `| product start → listening / → first delivery / → last delivery | ${((listening - startAt) / 1000).toFixed(1)} s / ${((first - startAt) / 1000).toFixed(1)} s / ${((last - startAt) / 1000).toFixed(1)} s |`,
      `| first → last delivery | ${((last - first) / 1000).toFixed(1)} s, ${(n / ((last - first) / 1000)).toFixed(0)} deliveries/s |`,
      `| **sustained: steady window (10th → 90th percentile arrival)** | **${steadyRate.toFixed(0)} deliveries/s** over ${steadyWindowS.toFixed(1)} s |`,
      `| per whole second in that window: min / p50 / max | ${perSecondText} |`,
      `| product start → last delivery, start-up included | ${overall.toFixed(0)} deliveries/s |`,
      `| CPU while catching up | ${cpu} |`,
      ...loss.rows,
      '',
      `Target ≥ 1,000 deliveries/s sustained: ${steadyRate >= 1000 ? 'met' : '**missed**'} (${steadyRate.toFixed(0)}/s over ${steadyWindowS.toFixed(1)} s). ` +
        `No loss: ${loss.noLoss && arrivedEarly === 0 ? 'yes' : '**no**'}. Waited ${((drainEnd - listening) / 1000).toFixed(1)} s after the product was listening. Peak RSS of the product: ${rss} MiB.`,
      '',
    ];
  } finally {
    await writer?.stop();
    await product?.stop();
    await projector.stop();
    await receiver.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The benchmark's webhook receiver: first arrival and count per delivery id, lead id per delivery. */
class LeadReceiver extends SignedReceiver {
  readonly firstArrival = new Map<string, number>();
  readonly arrivals = new Map<string, number>();
  readonly leadOf = new Map<string, string>();
  otherEvents = 0;
  lastArrival = 0;

  constructor() {
    super((delivery) => {
      this.lastArrival = delivery.at;
      this.arrivals.set(delivery.deliveryId, (this.arrivals.get(delivery.deliveryId) ?? 0) + 1);
      if (delivery.body.event !== 'lead.created' || delivery.body.id !== delivery.deliveryId) {
        this.otherEvents++;
        return;
      }
      if (!this.firstArrival.has(delivery.deliveryId)) {
        this.firstArrival.set(delivery.deliveryId, delivery.at);
        this.leadOf.set(delivery.deliveryId, delivery.body.data.lead.id);
      }
    });
    this.secret = 'not yet';
  }
}

/** `count` storefront leads, CLIENTS requests in flight, until done or DEADLINE_S. */
async function createLeads(baseUrl: string, slug: string, count: number): Promise<{ leadIds: Set<string>; failures: number; requestMs: number[] }> {
  const leadIds = new Set<string>();
  const requestMs: number[] = [];
  let failures = 0;
  let next = 0;
  const deadline = performance.now() + DEADLINE_S * 1000;
  const url = `${baseUrl}/storefront/v1/${slug}/leads`;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < count && performance.now() < deadline) {
        const i = next++;
        const t0 = performance.now();
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Bench Lead ${i}`, email: `lead${i}@example.com`, message: `Please quote ${i} windows.` }),
        });
        const body = (await res.json().catch(() => null)) as { id?: string } | null;
        requestMs.push(performance.now() - t0);
        if (res.status === 201 && body?.id) leadIds.add(body.id);
        else failures++;
      }
    }),
  );
  return { leadIds, failures, requestMs };
}

/** The delivery log once every record is delivered (a record may be written a moment after its 2xx). */
async function settledDeliveryLog(baseUrl: string, apiKey: string): Promise<ListedDelivery[]> {
  let log = await listDeliveries(baseUrl, apiKey);
  for (let i = 0; i < 20 && log.some((d) => d.status !== 'delivered'); i++) {
    await pause(250);
    log = await listDeliveries(baseUrl, apiKey);
  }
  return log;
}

/** Throughput from the receiver's side: overall, and over the steady window (10th → 90th percentile arrival). */
function arrivalStats(firstArrival: Map<string, number>) {
  const times = [...firstArrival.values()].sort((a, b) => a - b);
  const n = times.length;
  const lo = times[Math.floor(n * 0.1)] ?? NaN;
  const hi = times[Math.max(0, Math.ceil(n * 0.9) - 1)] ?? NaN;
  const buckets: number[] = [];
  for (const t of times) {
    if (t < lo || t >= hi) continue;
    const b = Math.floor((t - lo) / 1000);
    buckets[b] = (buckets[b] ?? 0) + 1;
  }
  const fullBuckets = Array.from({ length: Math.floor((hi - lo) / 1000) }, (_, i) => buckets[i] ?? 0);
  const perSecond = percentiles(fullBuckets);
  return {
    times,
    n,
    first: times[0] ?? NaN,
    last: times[n - 1] ?? NaN,
    steadyRate: (Math.ceil(n * 0.9) - 1 - Math.floor(n * 0.1)) / ((hi - lo) / 1000),
    steadyWindowS: (hi - lo) / 1000,
    perSecondText: perSecond.count ? `${Math.min(...fullBuckets)} / ${perSecond.p50} / ${perSecond.max}` : '–',
  };
}

/** No loss: every lead's delivery arrived, and the delivery log shows exactly those records, all delivered. */
function lossReport(receiver: LeadReceiver, leadIds: Set<string>, log: ListedDelivery[]) {
  const deliveredLeads = new Set(receiver.leadOf.values());
  const lostLeads = [...leadIds].filter((id) => !deliveredLeads.has(id)).length;
  const duplicates = [...receiver.arrivals.values()].reduce((sum, c) => sum + c - 1, 0);
  const leadLog = log.filter((d) => d.type === 'lead.created');
  const byStatus = new Map<string, number>();
  for (const d of leadLog) byStatus.set(d.status, (byStatus.get(d.status) ?? 0) + 1);
  const logNotReceived = leadLog.filter((d) => !receiver.firstArrival.has(d.id)).length;
  const logIds = new Set(leadLog.map((d) => d.id));
  const receivedNotInLog = [...receiver.firstArrival.keys()].filter((id) => !logIds.has(id)).length;
  const retried = leadLog.filter((d) => d.attempts > 1).length;
  const noLoss = lostLeads === 0 && logNotReceived === 0 && receivedNotInLog === 0 && leadLog.length === leadIds.size && (byStatus.get('delivered') ?? 0) === leadLog.length;
  const rows = [
    `| leads whose delivery never arrived | ${lostLeads} |`,
    `| duplicate arrivals | ${duplicates} |`,
    `| signatures refused / other events | ${receiver.badSignatures} / ${receiver.otherEvents} |`,
    `| GET /api/v1/events lead.created records | ${leadLog.length} (${[...byStatus].map(([s, c]) => `${s} ${c}`).join(', ')}; ${retried} needed more than one attempt) |`,
    `| log records never received / received but not in the log | ${logNotReceived} / ${receivedNotInLog} |`,
  ];
  return { leadLog, noLoss, rows };
}

if (require.main === module) {
  (async () => [...(await benchDispatch()), ...(await benchDispatchBacklog())])()
    .then((lines) => process.stdout.write(`${lines.join('\n')}\n`))
    .catch((error) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    });
}
