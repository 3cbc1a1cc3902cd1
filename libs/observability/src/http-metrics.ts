import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from './metrics';

/**
 * Counts every answered request and its duration by route template (`/api/v1/quotes/:id`, never
 * the URL, so no id or token becomes a label); requests that matched no route share one label.
 */
export function registerHttpMetrics(fastify: FastifyInstance, metrics: Metrics): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    countRequest(metrics, request, reply);
    done();
  });
}

/**
 * Counts a request whose reply the handler hijacked (a stream: Fastify runs no onResponse hook
 * for it) when its connection closes, as registerHttpMetrics counts every other one.
 */
export function countWhenClosed(metrics: Metrics, request: FastifyRequest, reply: FastifyReply): void {
  reply.raw.once('close', () => countRequest(metrics, request, reply));
}

function countRequest(metrics: Metrics, request: FastifyRequest, reply: FastifyReply): void {
  metrics.countRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.raw.statusCode, reply.elapsedTime);
}
