import { Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { checkpointName, liveProjections, POINTER_REFRESH_MS, ReadYourWrites, readsSeeProgressOf, startProjections, type RunningProjections } from '@lib/event-sourcing';
import { EventStore } from '@lib/event-store';
import { ReadStore } from '@lib/read-store';
import { ProjectionRegistry } from '@lib/runtime';

/**
 * The projector process: keeps every registered read model up to date from the event store.
 * The projections share one reader of the log, and each keeps its own checkpoint, so one can be
 * rebuilt on its own. It follows the active-generation pointers: when a rebuild (the CLI, in any
 * process) switches a projection to a new generation, the projector restarts on that generation
 * from its checkpoint within a pointer refresh.
 */
@Module({})
export class ProjectorModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Projector');
  private running: RunningProjections | null = null;
  /** the checkpoint names of the generations running now */
  private runningKey = '';
  private timer: NodeJS.Timeout | null = null;
  private switching: Promise<void> = Promise.resolve();

  constructor(
    private readonly registry: ProjectionRegistry,
    private readonly events: EventStore,
    private readonly reads: ReadStore,
    private readonly readYourWrites: ReadYourWrites,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.readYourWrites.track(this.registry.all().map((p) => p.name));
    await this.follow();
    this.timer = setInterval(() => {
      this.switching = this.switching.then(() => this.follow()).catch((error) => this.logger.error(`could not follow the projection pointers: ${String(error)}`));
    }, POINTER_REFRESH_MS);
    this.timer.unref();
  }

  /** (Re)starts the projections when the live generations differ from the running ones. */
  private async follow(): Promise<void> {
    const projections = await liveProjections(this.reads, this.registry.all());
    const key = projections.map(checkpointName).join(',');
    if (key === this.runningKey) return;
    await this.running?.stop();
    this.running = await startProjections(this.events, this.reads, projections, (projection, position) => {
      // Until it follows a switch, the generation it runs is behind what reads are served from.
      if (readsSeeProgressOf(this.reads, projection)) this.readYourWrites.report(projection.name, position);
    });
    this.runningKey = key;
    this.logger.log(`running ${projections.length} projections: ${projections.map((p) => `${p.name}@v${p.version}${p.generation ? `g${p.generation}` : ''}`).join(', ')}`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.switching;
    await this.running?.stop();
    this.running = null;
  }
}
