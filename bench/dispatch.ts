/**
 * Webhook dispatch throughput (issue 3): storefront leads created as fast as the API takes them,
 * each one a `lead.created` delivery to a receiver in this process (127.0.0.1) that verifies
 * X-Service-Signature. Measured from the receiver's side: deliveries per second over the steady
 * part of the run, and no loss — every lead's delivery arrives at least once (duplicates counted
 * apart) and GET /api/v1/events shows every record delivered.
 *
 * Bounded by count and time. Environment: BENCH_DISPATCH_LEADS (20000), BENCH_DISPATCH_CLIENTS
 * (64 requests in flight), BENCH_DISPATCH_DEADLINE_S (180, for creating; draining gets 60 s more),
 * BENCH_CPU_PROFILE_DIR (profile the gateway with node --cpu-prof).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { monotonicUs, summarizeCpuProfiles } from './cpu-profile-summary';
import { CpuMeter, cpuText, listDeliveries, loopWaits, ms, pause, percentiles, seedWebhookOrganization, startProduct } from './live-product';
import { SignedReceiver } from './signed-receiver';

const LEADS = Number(process.env.BENCH_DISPATCH_LEADS ?? 20_000);
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

  /** first arrival per delivery id, arrivals per id, lead id per delivery id */
  const firstArrival = new Map<string, number>();
  const arrivals = new Map<string, number>();
  const leadOf = new Map<string, string>();
  let otherEvents = 0;
  let lastArrival = 0;
  const receiver = new SignedReceiver((delivery) => {
    lastArrival = delivery.at;
    arrivals.set(delivery.deliveryId, (arrivals.get(delivery.deliveryId) ?? 0) + 1);
    if (delivery.body.event !== 'lead.created' || delivery.body.id !== delivery.deliveryId) {
      otherEvents++;
      return;
    }
    if (!firstArrival.has(delivery.deliveryId)) {
      firstArrival.set(delivery.deliveryId, delivery.at);
      leadOf.set(delivery.deliveryId, delivery.body.data.lead.id);
    }
  });

  try {
    receiver.secret = 'not yet';
    const receiverUrl = await receiver.start();
    const org = await seedWebhookOrganization(product.baseUrl, { webhookUrl: receiverUrl });
    receiver.secret = org.secret;

    // Create the leads: CLIENTS requests in flight, until LEADS or the deadline.
    const leadIds = new Set<string>();
    let failures = 0;
    let next = 0;
    const createStart = performance.now();
    const createStartWall = Date.now();
    const createStartUs = monotonicUs();
    const creatingMeter = new CpuMeter(product);
    const deadline = createStart + DEADLINE_S * 1000;
    const url = `${product.baseUrl}/storefront/v1/${org.slug}/leads`;
    const requestMs: number[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < LEADS && performance.now() < deadline) {
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
    const createEnd = performance.now();
    const createEndWall = Date.now();
    const createEndUs = monotonicUs();
    const cpuCreating = cpuText(creatingMeter.read());
    const drainingMeter = new CpuMeter(product);
    const receivedWhenCreated = firstArrival.size;

    // Drain: until every lead's delivery arrived, nothing new came for STALL_MS, or DRAIN_S passed.
    const drainDeadline = performance.now() + DRAIN_S * 1000;
    while (firstArrival.size < leadIds.size && performance.now() < drainDeadline && performance.now() - Math.max(lastArrival, createEnd) < STALL_MS) await pause(50);
    const drainEnd = performance.now();
    const drainEndUs = monotonicUs();
    const cpuDraining = cpuText(drainingMeter.read());

    // The delivery log: every record delivered (a record may still be written a moment after its 2xx).
    let log = await listDeliveries(product.baseUrl, org.apiKey);
    for (let i = 0; i < 20 && log.some((d) => d.status !== 'delivered'); i++) {
      await pause(250);
      log = await listDeliveries(product.baseUrl, org.apiKey);
    }
    const rss = product.peakRssMiB();
    await pause(1_100); // the probe writes its samples once a second
    const waitsCreating = percentiles(loopWaits(product.loopProbeFile, createStartUs, createEndUs));
    const waitsDraining = percentiles(loopWaits(product.loopProbeFile, createEndUs, drainEndUs));
    await product.stop();

    // Throughput from the receiver's side.
    const times = [...firstArrival.values()].sort((a, b) => a - b);
    const n = times.length;
    const first = times[0] ?? NaN;
    const last = times[n - 1] ?? NaN;
    const lo = times[Math.floor(n * 0.1)] ?? NaN;
    const hi = times[Math.max(0, Math.ceil(n * 0.9) - 1)] ?? NaN;
    const steadyRate = (Math.ceil(n * 0.9) - 1 - Math.floor(n * 0.1)) / ((hi - lo) / 1000);
    const buckets: number[] = [];
    for (const t of times) {
      if (t < lo || t >= hi) continue;
      const b = Math.floor((t - lo) / 1000);
      buckets[b] = (buckets[b] ?? 0) + 1;
    }
    const fullBuckets = buckets.slice(0, Math.floor((hi - lo) / 1000)).map((v) => v ?? 0);
    const perSecond = percentiles(fullBuckets);
    const afterCreation = times.filter((t) => t > createEnd);
    const drainRate = afterCreation.length > 1 ? afterCreation.length / ((afterCreation[afterCreation.length - 1] - createEnd) / 1000) : NaN;

    // Loss.
    const deliveredLeads = new Set(leadOf.values());
    const lostLeads = [...leadIds].filter((id) => !deliveredLeads.has(id)).length;
    const duplicates = [...arrivals.values()].reduce((sum, c) => sum + c - 1, 0);
    const leadLog = log.filter((d) => d.type === 'lead.created');
    const byStatus = new Map<string, number>();
    for (const d of leadLog) byStatus.set(d.status, (byStatus.get(d.status) ?? 0) + 1);
    const logNotReceived = leadLog.filter((d) => !firstArrival.has(d.id)).length;
    const logIds = new Set(leadLog.map((d) => d.id));
    const receivedNotInLog = [...firstArrival.keys()].filter((id) => !logIds.has(id)).length;
    const retried = leadLog.filter((d) => d.attempts > 1).length;
    // From the log (wall clock): how far the outbox had got while the leads were being created.
    const recordsWhileCreating = leadLog.filter((d) => d.createdAt <= createEndWall).length;
    const deliveredWhileCreating = leadLog.filter((d) => d.deliveredAt !== null && d.deliveredAt <= createEndWall).length;
    const lastRecordCreated = Math.max(...leadLog.map((d) => d.createdAt));
    const createSeconds = (createEnd - createStart) / 1000;
    const requests = percentiles(requestMs);
    const noLoss = lostLeads === 0 && logNotReceived === 0 && receivedNotInLog === 0 && leadLog.length === leadIds.size && (byStatus.get('delivered') ?? 0) === leadLog.length;

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
      `| **sustained: steady window (10th → 90th percentile arrival)** | **${steadyRate.toFixed(0)} deliveries/s** over ${((hi - lo) / 1000).toFixed(1)} s |`,
      `| per whole second in that window: min / p50 / max | ${perSecond.count ? `${Math.min(...fullBuckets)} / ${perSecond.p50} / ${perSecond.max}` : '–'} |`,
      `| received by the time the last lead was created | ${receivedWhenCreated} (backlog ${leadIds.size - receivedWhenCreated}) |`,
      `| after the last lead was created | ${afterCreation.length} deliveries in ${afterCreation.length ? ((afterCreation[afterCreation.length - 1] - createEnd) / 1000).toFixed(1) : 0} s (${Number.isFinite(drainRate) ? drainRate.toFixed(0) : '–'} /s) |`,
      `| delivery records created (outbox reactor) / delivered while the leads were being created | ${recordsWhileCreating} / ${deliveredWhileCreating} of ${leadIds.size} (${(deliveredWhileCreating / createSeconds).toFixed(0)} deliveries/s) |`,
      `| CPU while creating | ${cpuCreating} |`,
      `| CPU while draining | ${cpuDraining} |`,
      `| gateway event-loop turn (setImmediate wait, sampled every 20 ms) p50 / p99 / max, creating | ${ms(waitsCreating.p50)} / ${ms(waitsCreating.p99)} / ${ms(waitsCreating.max)} ms |`,
      `| same, draining | ${ms(waitsDraining.p50)} / ${ms(waitsDraining.p99)} / ${ms(waitsDraining.max)} ms |`,
      `| last delivery record created | ${((lastRecordCreated - createStartWall) / 1000).toFixed(1)} s after the first lead was sent (creation took ${createSeconds.toFixed(1)} s) |`,
      `| leads whose delivery never arrived | ${lostLeads} |`,
      `| duplicate arrivals | ${duplicates} |`,
      `| signatures refused / other events | ${receiver.badSignatures} / ${otherEvents} |`,
      `| GET /api/v1/events lead.created records | ${leadLog.length} (${[...byStatus].map(([s, c]) => `${s} ${c}`).join(', ')}; ${retried} needed more than one attempt) |`,
      `| log records never received / received but not in the log | ${logNotReceived} / ${receivedNotInLog} |`,
      '',
      `Target ≥ 1,000 deliveries/s sustained: steady window ${steadyRate >= 1000 ? 'met' : '**missed**'} (${steadyRate.toFixed(0)}/s); ` +
        `while the API was taking the writes ${deliveredWhileCreating / createSeconds >= 1000 ? 'met' : '**missed**'} (${(deliveredWhileCreating / createSeconds).toFixed(0)}/s). ` +
        `No loss: ${noLoss ? 'yes' : '**no**'}. ` +
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

if (require.main === module) {
  benchDispatch()
    .then((lines) => process.stdout.write(`${lines.join('\n')}\n`))
    .catch((error) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    });
}
