import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics';

/**
 * Counts every answered request and its duration by route template (`/api/v1/quotes/:id`, never
 * the URL, so no id or token becomes a label); requests that matched no route share one label.
 */
export function registerHttpMetrics(fastify: FastifyInstance, metrics: Metrics): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    metrics.countRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime);
    done();
  });
}
