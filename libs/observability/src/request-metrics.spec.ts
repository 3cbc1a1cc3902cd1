import { Counter, Histogram, Registry, type Metric } from 'prom-client';
import { RequestMetrics } from './request-metrics';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The same observations through prom-client's own Counter and Histogram, and through RequestMetrics. */
function bothRegistries(observations: Array<[method: string, route: string, status: number, seconds: number]>): Promise<[string, string]> {
  const reference = new Registry();
  const counter = new Counter({ name: 'http_requests_total', help: 'requests', labelNames: ['method', 'route', 'status'], registers: [reference] });
  const histogram = new Histogram({ name: 'http_request_duration_seconds', help: 'durations', labelNames: ['method', 'route'], buckets: BUCKETS, registers: [reference] });
  const ours = new Registry();
  const requests = new RequestMetrics(BUCKETS);
  ours.registerMetric(requests.requestsMetric('http_requests_total', 'requests') as unknown as Metric);
  ours.registerMetric(requests.durationMetric('http_request_duration_seconds', 'durations') as unknown as Metric);
  for (const [method, route, status, seconds] of observations) {
    counter.inc({ method, route, status });
    histogram.observe({ method, route }, seconds);
    requests.count(method, route, status, seconds);
  }
  return Promise.all([reference.metrics(), ours.metrics()]);
}

const lines = (text: string) => text.split('\n').sort();

describe('RequestMetrics', () => {
  it('scrapes the same lines as prom-client Counter and Histogram give for the same requests', async () => {
    const [reference, ours] = await bothRegistries([
      ['GET', '/api/v1/quotes', 200, 0.0004],
      ['GET', '/api/v1/quotes', 200, 0.005], // on a bound: counted in that bucket (le is inclusive)
      ['GET', '/api/v1/quotes', 304, 0.02],
      ['POST', '/api/v1/quotes', 201, 0.3],
      ['GET', 'unmatched', 404, 12], // past the last bound: only +Inf
      ['GET', '/api/v1/quotes/:id', 200, 1],
      ['POST', '/api/v1/quotes', 422, 0.0001],
    ]);
    // The same lines; series may come in another order (by route here, by first observation there), which the format leaves free.
    expect(lines(ours)).toEqual(lines(reference));
    expect(ours).toContain('http_requests_total{method="GET",route="/api/v1/quotes",status="200"} 2');
    expect(ours).toContain('http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/v1/quotes"} 2');
    expect(ours).toContain('http_request_duration_seconds_bucket{le="10",method="GET",route="unmatched"} 0');
    expect(ours).toContain('http_request_duration_seconds_bucket{le="+Inf",method="GET",route="unmatched"} 1');
  });

  it('counts a request without a duration (a stream) in the requests only', async () => {
    const requests = new RequestMetrics(BUCKETS);
    const registry = new Registry();
    registry.registerMetric(requests.requestsMetric('http_requests_total', 'requests') as unknown as Metric);
    registry.registerMetric(requests.durationMetric('http_request_duration_seconds', 'durations') as unknown as Metric);
    requests.count('GET', '/stream', 200, null);
    requests.count('GET', '/api/v1/quotes', 200, 0.01);
    const text = await registry.metrics();
    expect(text).toContain('http_requests_total{method="GET",route="/stream",status="200"} 1');
    expect(text).not.toContain('http_request_duration_seconds_count{method="GET",route="/stream"}');
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/api/v1/quotes"} 1');
  });

  it('scrapes an empty pair of metrics as prom-client does before the first request', async () => {
    const [reference, ours] = await bothRegistries([]);
    expect(ours).toBe(reference);
  });

  it('keeps counting across scrapes', async () => {
    const requests = new RequestMetrics(BUCKETS);
    const metric = requests.requestsMetric('http_requests_total', 'requests');
    requests.count('GET', '/x', 200, 0.001);
    expect((await metric.get()).values).toEqual([{ labels: { method: 'GET', route: '/x', status: 200 }, value: 1 }]);
    requests.count('GET', '/x', 200, 0.001);
    expect((await metric.get()).values).toEqual([{ labels: { method: 'GET', route: '/x', status: 200 }, value: 2 }]);
  });
});
