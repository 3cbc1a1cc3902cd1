import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { RequestMetrics } from './request-metrics';

export type DeliveryOutcome = 'delivered' | 'retry' | 'failed';
export type PricingLoopStage = 'calculated_delivered' | 'adjustment_received' | 'adjustment_pushed';

/** Reads a gauge's current values at scrape time; an error leaves the gauge without samples. */
type Source<T> = () => Promise<T>;

/**
 * The metrics of one process, in one prom-client registry of its own (default process metrics
 * included). Gauges that describe stored state (projection lag, outbox depth, jobs) are read when
 * scraped, never on the request path; counters and histograms are updated where things happen.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  /** Requests and their durations, counted on every request without prom-client's per-observation cost (see RequestMetrics). */
  private readonly requests = new RequestMetrics([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);

  readonly deliveryOutcomes = new Counter({
    name: 'webhook_delivery_outcomes_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (will be attempted again) or failed (gave up)',
    labelNames: ['target', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly storeUnavailableAnswers = new Counter({
    name: 'store_unavailable_answers_total',
    help: 'Requests answered 503 unavailable because a store refused or could not be reached (a full disk, a read-only or locked file, an unreachable engine), by the error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  readonly pricingLoopLatency = new Histogram({
    name: 'pricing_loop_latency_seconds',
    help: 'Live pricing loop: configuration change to pricing.calculated delivered (calculated_delivered); configuration change to the partner\'s first adjustment for it (adjustment_received); partner adjustment to the session update pushed to the customer (adjustment_pushed)',
    labelNames: ['stage'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  /** One answered request: `route` is its route template, never the URL. */
  /** `elapsedMs` null: counted without a duration (see RequestMetrics.count). */
  countRequest(method: string, route: string, status: number, elapsedMs: number | null): void {
    this.requests.count(method, route, status, elapsedMs === null ? null : elapsedMs / 1000);
  }

  private projectionPositions: Source<{ head: number; checkpoints: Array<{ projection: string; position: number }> }> | null = null;
  private deliveryDepth: Source<{ pending: number; processing: number }> | null = null;
  private relayPosition: Source<{ head: number; relayed: number }> | null = null;
  private writesRefused: (() => boolean) | null = null;
  private embeddedFiles: Source<Array<{ file: string; bytes: number }>> | null = null;
  private jobDepth: Source<Array<{ kind: string; status: string; count: number }>> | null = null;

  constructor() {
    for (const metric of [
      this.requests.requestsMetric('http_requests_total', 'HTTP requests answered, by route template (never the raw URL) and status code'),
      this.requests.durationMetric('http_request_duration_seconds', 'Time from receiving a request to sending the response, by route template'),
    ])
      this.registry.registerMetric(metric as unknown as Metric);
    collectDefaultMetrics({ register: this.registry });
    const metrics = this;
    new Gauge({
      name: 'projection_lag_events',
      help: 'Events in the log a projection has not applied yet (head position minus its checkpoint)',
      labelNames: ['projection'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        const read = await metrics.projectionPositions?.().catch(() => null);
        for (const { projection, position } of read?.checkpoints ?? []) this.set({ projection }, Math.max(read!.head - position, 0));
      },
    });
    new Gauge({
      name: 'outbox_deliveries',
      help: 'Webhook deliveries waiting (pending) or being attempted (processing)',
      labelNames: ['status'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        const depth = await metrics.deliveryDepth?.().catch(() => null);
        if (!depth) return;
        this.set({ status: 'pending' }, depth.pending);
        this.set({ status: 'processing' }, depth.processing);
      },
    });
    new Gauge({
      name: 'gateway_refusing_writes',
      help: '1 while this gateway refuses writes (503 unavailable, nothing written) because its read side is behind, else 0',
      registers: [this.registry],
      collect() {
        this.reset();
        if (metrics.writesRefused) this.set(metrics.writesRefused() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'outbox_relay_lag_events',
      help: 'Events in the log the outbox has not handed to the message bus yet (head position minus the relay checkpoint): grows while the bus is down',
      registers: [this.registry],
      async collect() {
        this.reset();
        const read = await metrics.relayPosition?.().catch(() => null);
        if (read) this.set(Math.max(read.head - read.relayed, 0));
      },
    });
    new Gauge({
      name: 'outbox_jobs',
      help: 'Quote e-mails and PDFs the outbox has to make: waiting (pending), being attempted (working), or given up (failed)',
      labelNames: ['kind', 'status'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { kind, status, count } of (await metrics.jobDepth?.().catch(() => null)) ?? []) this.set({ kind, status }, count);
      },
    });
    new Gauge({
      name: 'embedded_store_bytes',
      help: 'Size of each file of the embedded stores in DATA_DIR (databases and their WAL files)',
      labelNames: ['file'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { file, bytes } of (await metrics.embeddedFiles?.().catch(() => null)) ?? []) this.set({ file }, bytes);
      },
    });
  }

  /** Where projection lag is read from (the process that knows the projections). */
  readProjectionPositionsFrom(source: Metrics['projectionPositions']): void {
    this.projectionPositions = source;
  }

  /** Where outbox depth is read from (the delivery log). */
  readDeliveryDepthFrom(source: Metrics['deliveryDepth']): void {
    this.deliveryDepth = source;
  }

  /** Whether the gateway refuses writes now (its read side is behind). */
  readWritesRefusedFrom(source: () => boolean): void {
    this.writesRefused = source;
  }

  /** Where the relay's checkpoint and the head of the log are read from (the outbox; the checkpoint read first). */
  readRelayPositionFrom(source: Metrics['relayPosition']): void {
    this.relayPosition = source;
  }

  /** Where the numbers of the outbox's jobs (quote e-mails, PDFs) by status are read from. */
  readJobDepthFrom(source: Metrics['jobDepth']): void {
    this.jobDepth = source;
  }

  /** Where the sizes of the embedded stores' files are read from. */
  readEmbeddedFilesFrom(source: Metrics['embeddedFiles']): void {
    this.embeddedFiles = source;
  }

  deliveryAttempted(target: string, outcome: DeliveryOutcome): void {
    this.deliveryOutcomes.inc({ target, outcome });
  }

  pricingLoop(stage: PricingLoopStage, milliseconds: number): void {
    if (milliseconds >= 0) this.pricingLoopLatency.observe({ stage }, milliseconds / 1000);
  }

  /** The Prometheus text exposition. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
