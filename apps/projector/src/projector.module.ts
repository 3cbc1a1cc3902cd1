import { Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ReadYourWrites, startProjections, type RunningProjections } from '@lib/event-sourcing';
import { EventStore } from '@lib/event-store';
import { ReadStore } from '@lib/read-store';
import { ProjectionRegistry } from '@lib/runtime';

/**
 * The projector process: keeps every registered read model up to date from the event store.
 * The projections share one reader of the log, and each keeps its own checkpoint, so one can be
 * rebuilt on its own.
 */
@Module({})
export class ProjectorModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Projector');
  private running: RunningProjections | null = null;

  constructor(
    private readonly registry: ProjectionRegistry,
    private readonly events: EventStore,
    private readonly reads: ReadStore,
    private readonly readYourWrites: ReadYourWrites,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const projections = this.registry.all();
    this.readYourWrites.track(projections.map((p) => p.name));
    this.running = await startProjections(this.events, this.reads, projections, (projection, position) =>
      this.readYourWrites.report(projection.name, position),
    );
    this.logger.log(`running ${projections.length} projections: ${projections.map((p) => `${p.name}@v${p.version}`).join(', ')}`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.running?.stop();
    this.running = null;
  }
}
