// First: V8 options that must be in place before anything is allocated.
import '@lib/runtime/heap-tuning';
import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { DomainModule, prepareRuntime } from '@lib/bootstrap';
import { ObservabilityModule, runWorkerProcess } from '@lib/observability';
import { ConfigModule, RuntimeModule } from '@lib/runtime';
import { startUpFailureLine, type AppConfig } from '@lib/shared';
import { ProjectorModule } from './projector.module';

@Module({})
class ProjectorApp {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: ProjectorApp, imports: [ConfigModule.forRoot(config), RuntimeModule, ObservabilityModule.forRoot({ projectionsMustBeCurrent: true }), DomainModule, ProjectorModule] };
  }
}

async function main(): Promise<void> {
  const { config } = prepareRuntime();
  await runWorkerProcess('projector', config, ProjectorApp.forRoot(config));
}

main().catch((error) => {
  process.stderr.write(`${startUpFailureLine(error)}\n`);
  process.exit(1);
});
