import { Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ReadYourWrites, startProjection, type RunningProjection } from '@lib/event-sourcing';
import { EventStore } from '@lib/event-store';
import { ReadStore } from '@lib/read-store';
import { ProjectionRegistry } from '@lib/runtime';

/**
 * The projector process: keeps every registered read model up to date from the event store.
 * Each projection has its own subscription and checkpoint, so one can be rebuilt on its own.
 */
@Module({})
export class ProjectorModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Projector');
  private running: RunningProjection[] = [];

  constructor(
    private readonly registry: ProjectionRegistry,
    private readonly events: EventStore,
    private readonly reads: ReadStore,
    private readonly readYourWrites: ReadYourWrites,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const projections = this.registry.all();
    this.readYourWrites.track(projections.map((p) => p.name));
    this.running = await Promise.all(
      projections.map((projection) =>
        startProjection(this.events, this.reads, projection, (position) => this.readYourWrites.report(projection.name, position)),
      ),
    );
    this.logger.log(`running ${projections.length} projections: ${projections.map((p) => `${p.name}@v${p.version}`).join(', ')}`);
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.running.map((r) => r.stop()));
    this.running = [];
  }
}
