import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { checkpointName, liveProjections, ReadYourWrites } from '@lib/event-sourcing';
import { ReadStore } from '@lib/read-store';
import { ProjectionRegistry } from '@lib/runtime';

/** How often the checkpoints are read while a write waits for them (or writes are refused until they move). */
export const CHECKPOINT_POLL_MS = 20;
/** How often they are read otherwise: nothing waits for them, but the progress stays roughly current. */
export const IDLE_CHECKPOINT_POLL_MS = 1_000;

/**
 * When the projector runs in another process, the gateway learns its progress from the
 * checkpoints stored beside the read models, so writes can still wait for read-your-writes. It
 * reads them every CHECKPOINT_POLL_MS while a write waits, at once when one starts waiting, and
 * every IDLE_CHECKPOINT_POLL_MS otherwise: an idle gateway used to send about 370 reads a second to
 * the read store (one per projection every 20 ms; counted on FerretDB), which on FerretDB took most of a core and made
 * writes wait long enough to be refused (found by a review on the real engines).
 */
@Injectable()
export class CheckpointPoller implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('CheckpointPoller');
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private lastPolled = Number.NEGATIVE_INFINITY;
  private lastError = 0;

  constructor(
    private readonly registry: ProjectionRegistry,
    private readonly reads: ReadStore,
    private readonly readYourWrites: ReadYourWrites,
  ) {}

  onApplicationBootstrap(): void {
    const projections = this.registry.all();
    this.readYourWrites.track(projections.map((p) => p.name));
    this.readYourWrites.onWaiting(() => this.poll());
    this.timer = setInterval(() => {
      if (this.readYourWrites.progressWanted() || performance.now() - this.lastPolled >= IDLE_CHECKPOINT_POLL_MS) this.poll();
    }, CHECKPOINT_POLL_MS);
    this.timer.unref();
  }

  private poll(): void {
    if (this.polling || !this.timer) return;
    this.lastPolled = performance.now();
    this.polling = this.readCheckpoints()
      .catch((error) => {
        // The read store may be briefly unreachable (a MongoDB failover): keep polling, log at most every 10 s.
        if (Date.now() - this.lastError < 10_000) return;
        this.lastError = Date.now();
        this.logger.warn(`could not read the projection checkpoints: ${String(error)}`);
      })
      .finally(() => (this.polling = null));
  }

  /**
   * The live generation's checkpoints (after a rebuild switches, the projector writes there), all
   * at once: with a networked read store each read is a round trip.
   */
  private async readCheckpoints(): Promise<void> {
    const projections = await liveProjections(this.reads, this.registry.all());
    const positions = await Promise.all(projections.map((projection) => this.reads.getCheckpoint(checkpointName(projection))));
    projections.forEach((projection, i) => {
      const position = positions[i];
      if (position !== null) this.readYourWrites.report(projection.name, position);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // The read store closes after this: let a poll in progress finish first.
    await this.polling;
  }
}
