import { createServer, type Server } from 'node:http';
import { listenFailure } from '@lib/shared';
import type { Metrics } from './metrics';
import type { Readiness } from './readiness';

/**
 * /healthz, /readyz and /metrics of a process without an HTTP API (standalone projector and
 * outbox), on OPS_PORT. Answers these three paths only; no auth, like the gateway's.
 */
export async function startOpsServer(options: { port: number; host: string; readiness: Readiness; metrics: Metrics }): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const answer = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET') return answer(404, 'application/json', JSON.stringify({ error: { code: 'not_found', message: 'Not found.' } }));
    if (path === '/healthz') return answer(200, 'application/json', JSON.stringify({ status: 'ok' }));
    if (path === '/readyz') {
      return void options.readiness.check().then((report) => answer(report.status === 'ready' ? 200 : 503, 'application/json', JSON.stringify(report)));
    }
    if (path === '/metrics') {
      return void options.metrics.exposition().then(
        ({ contentType, body }) => answer(200, contentType, body),
        () => answer(500, 'text/plain', 'metrics unavailable\n'),
      );
    }
    answer(404, 'application/json', JSON.stringify({ error: { code: 'not_found', message: 'Not found.' } }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(listenFailure(error, 'OPS_PORT')));
    server.listen(options.port, options.host, () => resolve());
  });
  return server;
}
