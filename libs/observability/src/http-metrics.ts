import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StoreRefusals } from '@lib/shared';
import type { Metrics } from './metrics';

/**
 * Counts every answered request and its duration by route template (`/api/v1/quotes/:id`, never
 * the URL, so no id or token becomes a label); requests that matched no route share one label.
 */
export function registerHttpMetrics(fastify: FastifyInstance, metrics: Metrics): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    // A stream the server ends also finishes its response, and Fastify runs this hook for it then.
    if (!streams.has(request)) countRequest(metrics, request, reply);
    done();
  });
}

/** Requests counted by countWhenClosed, which the onResponse hook leaves alone (they were counted twice, found by a review). */
const streams = new WeakSet<FastifyRequest>();

/**
 * Counts a request whose reply the handler hijacked (a stream: Fastify runs no onResponse hook
 * for it) when its connection closes, as registerHttpMetrics counts every other one; not in the
 * durations: a stream lasts as long as the customer looks, and its minutes filled the top bucket
 * of every quantile not filtered by route (found by a review).
 */
export function countWhenClosed(metrics: Metrics, request: FastifyRequest, reply: FastifyReply): void {
  streams.add(request);
  reply.raw.once('close', () => metrics.countRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.raw.statusCode, null));
}

function countRequest(metrics: Metrics, request: FastifyRequest, reply: FastifyReply): void {
  metrics.countRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.raw.statusCode, reply.elapsedTime);
  const refusal = StoreRefusals.of(request);
  if (refusal) metrics.storeUnavailableAnswers.inc({ code: refusal });
}
