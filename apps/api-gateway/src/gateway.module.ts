import { Module, type DynamicModule } from '@nestjs/common';
import { DomainModule } from '@lib/bootstrap';
import { ObservabilityModule } from '@lib/observability';
import { ConfigModule, RuntimeModule } from '@lib/runtime';
import type { AppConfig } from '@lib/shared';
import { WebModule } from '@lib/web';
import { OutboxModule } from '../../outbox/src/outbox.module';
import { ProjectorModule } from '../../projector/src/projector.module';
import { CheckpointPoller } from './checkpoint-poller';
import { HealthController } from './health.controller';

export interface GatewayOptions {
  /** run the projector and the outbox in this process too (the embedded, one-process mode) */
  withWorkers: boolean;
}

@Module({})
export class GatewayModule {
  static forRoot(config: AppConfig, options: GatewayOptions): DynamicModule {
    return {
      module: GatewayModule,
      imports: [
        ConfigModule.forRoot(config),
        RuntimeModule,
        ObservabilityModule.forRoot({ projectionsMustBeCurrent: true }),
        DomainModule,
        WebModule,
        ...(options.withWorkers ? [ProjectorModule, OutboxModule] : []),
      ],
      controllers: [HealthController],
      providers: options.withWorkers ? [] : [CheckpointPoller],
    };
  }
}
