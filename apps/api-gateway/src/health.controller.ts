import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Metrics, Readiness } from '@lib/observability';

/** Operations endpoints (docs/monitoring.md): outside the APIs, no credentials, not rate limited. */
@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    private readonly readiness: Readiness,
    private readonly metrics: Metrics,
  ) {}

  /** The process is up and answering. */
  @Get('healthz')
  @Header('cache-control', 'no-store')
  health() {
    return { status: 'ok' };
  }

  /** The process can do its work: stores reachable, projections current, not shutting down. */
  @Get('readyz')
  async ready(@Res() reply: FastifyReply): Promise<void> {
    const report = await this.readiness.check();
    reply.header('cache-control', 'no-store').status(report.status === 'ready' ? 200 : 503).send(report);
  }

  @Get('metrics')
  async scrape(@Res() reply: FastifyReply): Promise<void> {
    const { contentType, body } = await this.metrics.exposition();
    reply.header('cache-control', 'no-store').type(contentType).send(body);
  }
}
