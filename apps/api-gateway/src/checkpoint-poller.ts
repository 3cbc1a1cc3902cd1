import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { checkpointName, liveProjections, ReadYourWrites } from '@lib/event-sourcing';
import { ReadStore } from '@lib/read-store';
import { ProjectionRegistry } from '@lib/runtime';

/**
 * When the projector runs in another process, the gateway learns its progress from the
 * checkpoints stored beside the read models, so writes can still wait for read-your-writes.
 */
@Injectable()
export class CheckpointPoller implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(
    private readonly registry: ProjectionRegistry,
    private readonly reads: ReadStore,
    private readonly readYourWrites: ReadYourWrites,
  ) {}

  onApplicationBootstrap(): void {
    const projections = this.registry.all();
    this.readYourWrites.track(projections.map((p) => p.name));
    this.timer = setInterval(() => void this.poll(), 20);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      // The live generation's checkpoint: after a rebuild switches, the projector writes there.
      for (const projection of await liveProjections(this.reads, this.registry.all())) {
        const position = await this.reads.getCheckpoint(checkpointName(projection));
        if (position !== null) this.readYourWrites.report(projection.name, position);
      }
    } finally {
      this.polling = false;
    }
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
