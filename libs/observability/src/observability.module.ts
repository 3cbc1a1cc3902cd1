import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamicModule, Global, Inject, Logger, Module, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { checkpointName, liveProjections, ReadYourWrites } from '@lib/event-sourcing';
import { EventStore } from '@lib/event-store';
import { ReadStore } from '@lib/read-store';
import { embeddedStoreFiles, ProjectionRegistry, RELAY_CHECKPOINT } from '@lib/runtime';
import { APP_CONFIG, type AppConfig } from '@lib/shared';
import { Metrics } from './metrics';
import { Readiness } from './readiness';

const OBSERVABILITY_OPTIONS = Symbol('OBSERVABILITY_OPTIONS');

export interface ObservabilityOptions {
  /** the process depends on the projections being current (gateway, projector); the outbox does not */
  projectionsMustBeCurrent: boolean;
}

/**
 * Metrics and readiness of one process. The stores are probed everywhere; projection lag is a
 * readiness condition where reads and read-your-writes depend on it. Other modules add what
 * they know (the outbox: the bus and the delivery log) to Metrics and Readiness.
 */
@Global()
@Module({})
export class ObservabilityModule implements OnModuleInit, OnApplicationBootstrap {
  static forRoot(options: ObservabilityOptions): DynamicModule {
    return {
      module: ObservabilityModule,
      providers: [Metrics, Readiness, { provide: OBSERVABILITY_OPTIONS, useValue: options }],
      exports: [Metrics, Readiness],
    };
  }

  constructor(
    private readonly metrics: Metrics,
    private readonly readiness: Readiness,
    private readonly events: EventStore,
    private readonly reads: ReadStore,
    private readonly projections: ProjectionRegistry,
    private readonly readYourWrites: ReadYourWrites,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(OBSERVABILITY_OPTIONS) private readonly options: ObservabilityOptions,
  ) {}

  onModuleInit(): void {
    this.metrics.readProjectionPositionsFrom(() => this.projectionPositions());
    this.metrics.readEmbeddedFilesFrom(async () => embeddedFileSizes(this.config));
    this.readiness.register('eventStore', async () => {
      await this.events.headPosition();
      return null;
    });
    this.readiness.register('readStore', async () => {
      await this.reads.getCheckpoint('readiness-probe');
      return null;
    });
    if (this.options.projectionsMustBeCurrent) this.readiness.register('projections', () => this.projectionLag());
    this.readiness.register('readStoreMatchesLog', async () => this.readYourWrites.refusedForGood() ?? (await this.checkpointsAhead()));
  }

  /**
   * A read store that does not belong to the event log, found at start-up, is said as an error
   * line, and holds for as long as the process runs: writes are refused (a write would take a
   * position the projector counts as applied, and be lost), and `/readyz` stays 503 even once the
   * log's head has passed the checkpoints, which mends nothing. A process started without a load
   * balancer polling `/readyz` (`npm start`) showed nothing, and answered such writes 201 (found
   * by reviews).
   */
  async onApplicationBootstrap(): Promise<void> {
    const problem = await this.checkpointsAhead().catch(() => null);
    if (problem === null) return;
    this.readYourWrites.refuseWritesForGood(problem);
    new Logger('Readiness').error(`${problem}. Writes are refused and /readyz answers 503 until the process is restarted on matching stores.`);
  }

  /**
   * A checkpoint past the head of the log means the read store holds what this log does not (the
   * two restored from different moments): the projector would skip the next events as applied,
   * and the outbox's relay would never relay them.
   */
  private async checkpointsAhead(): Promise<string | null> {
    // Read before the head, as the projections' checkpoints are (projectionPositions).
    const relay = { checkpoint: RELAY_CHECKPOINT, position: (await this.reads.getCheckpoint(RELAY_CHECKPOINT)) ?? 0 };
    const { head, checkpoints } = await this.projectionPositions();
    const ahead = [...checkpoints, relay].filter(({ position }) => position > head).map(({ checkpoint, position }) => `${checkpoint} at ${position}`);
    return ahead.length ? `checkpoints ahead of the event log's head (${head}): ${ahead.join(', ')}; the read store does not belong to this event log (see Restore in docs/operations.md)` : null;
  }

  /**
   * Where the live generation of each projection stands: after a rebuild's switch, the new
   * generation's checkpoint. The checkpoints are read before the head, so a projector applying new
   * events cannot seem to be past it.
   */
  private async projectionPositions() {
    const live = await liveProjections(this.reads, this.projections.all());
    const checkpoints = await Promise.all(
      live.map(async (projection) => {
        const checkpoint = checkpointName(projection);
        return { projection: projection.name, checkpoint, position: (await this.reads.getCheckpoint(checkpoint)) ?? 0 };
      }),
    );
    const head = await this.events.headPosition();
    return { head, checkpoints };
  }

  private async projectionLag(): Promise<string | null> {
    const { head, checkpoints } = await this.projectionPositions();
    const max = this.config.readyMaxProjectionLag;
    const behind = checkpoints.filter(({ position }) => head - position > max).map(({ projection, position }) => `${projection} (${head - position} events)`);
    return behind.length ? `more than ${max} events behind: ${behind.join(', ')}` : null;
  }
}

/** The embedded stores' files in DATA_DIR and their WALs, with their sizes (a file not there yet is left out). */
async function embeddedFileSizes(config: AppConfig): Promise<Array<{ file: string; bytes: number }>> {
  const sizes = await Promise.all(
    embeddedStoreFiles(config).flatMap((database) => [database, `${database}-wal`]).map(async (file) => {
      try {
        return { file, bytes: (await stat(join(config.dataDir, file))).size };
      } catch {
        return null; // not created yet, or no WAL at the moment
      }
    }),
  );
  return sizes.filter((size) => size !== null);
}
