import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DomainModule, prepareRuntime } from '@lib/bootstrap';
import { ConfigModule, RuntimeModule } from '@lib/runtime';
import type { AppConfig } from '@lib/shared';
import { OutboxModule } from './outbox.module';

@Module({})
class OutboxApp {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: OutboxApp, imports: [ConfigModule.forRoot(config), RuntimeModule, DomainModule, OutboxModule] };
  }
}

async function main(): Promise<void> {
  const { config } = prepareRuntime();
  const app = await NestFactory.createApplicationContext(OutboxApp.forRoot(config), { abortOnError: false });
  app.enableShutdownHooks();
}

main().catch((error) => {
  process.stderr.write(`start-up failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
