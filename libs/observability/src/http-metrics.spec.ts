import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { countWhenClosed, registerHttpMetrics } from './http-metrics';
import { Metrics } from './metrics';

describe('registerHttpMetrics with countWhenClosed', () => {
  it('counts a stream the server ends once (the client leaving is counted by close alone), and not in the durations', async () => {
    const metrics = new Metrics();
    const fastify = Fastify();
    registerHttpMetrics(fastify, metrics);
    fastify.get('/stream', (request, reply) => {
      reply.hijack();
      countWhenClosed(metrics, request, reply);
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
      reply.raw.write('event: session\ndata: {}\n\n');
      // The server ends it, as a stream of an expired session is ended.
      setTimeout(() => reply.raw.end(), 20);
    });
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = fastify.server.address() as AddressInfo;
      await new Promise<void>((resolve, reject) => get(`http://127.0.0.1:${port}/stream`, (res) => res.resume().on('end', resolve)).on('error', reject));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const text = await metrics.registry.metrics();
      expect(text).toContain('http_requests_total{method="GET",route="/stream",status="200"} 1');
      expect(text).not.toContain('http_request_duration_seconds_count{method="GET",route="/stream"}');
    } finally {
      await fastify.close();
    }
  });
});
