import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '@lib/shared/testing/processes';
import { WebhookReceiver } from '@lib/webhooks/testing/webhook-receiver';
import { startProduct, type ProductProcess } from './support/product-process';

const ADMIN_TOKEN = 'adm_shutdown_test_token_0123456789';

/**
 * SIGTERM on the real process (`npm start` from the sources, as a child): it stops accepting
 * connections, finishes the request and the webhook attempt in flight, exits 0, and after a
 * restart on the same DATA_DIR nothing is lost and the finished delivery is not sent again.
 */
describe('graceful shutdown on SIGTERM', () => {
  let receiver: WebhookReceiver;
  let dataDir: string;
  let product: ProductProcess | null = null;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    dataDir = mkdtempSync(join(tmpdir(), 'shutdown-'));
  });
  afterAll(async () => {
    if (product && product.child.exitCode === null) product.child.kill('SIGKILL');
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const env = () => ({
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_ATTEMPT_TIMEOUT_MS: '5000',
    SHUTDOWN_TIMEOUT_MS: '5000',
    RATE_LIMIT_IP_PER_MIN: '0',
    RATE_LIMIT_KEY_PER_MIN: '0',
  });

  async function call(method: string, path: string, token?: string, body?: unknown) {
    const res = await fetch(`${product!.baseUrl}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  /** A request whose body arrives in two parts; resolves with its status once answered. */
  function slowLead(slug: string): { sendRest: () => void; answered: Promise<number> } {
    const body = Buffer.from(JSON.stringify({ name: 'Slow Sam', email: 'sam@example.com', message: 'Sent slowly' }));
    const url = new URL(`${product!.baseUrl}/storefront/v1/${slug}/leads`);
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } });
    const answered = new Promise<number>((resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
    });
    req.write(body.subarray(0, 10));
    return { sendRest: () => req.end(body.subarray(10)), answered };
  }

  it('finishes the request and the delivery in flight, exits 0, and loses nothing across the restart', async () => {
    product = await startProduct(env());
    const org = await call('POST', '/admin/v1/organizations', ADMIN_TOKEN, { name: 'Shutdown Windows', slug: 'shutdown-windows', settings: { webhookUrl: receiver.url('/slow') } });
    expect(org.status).toBe(201);
    const orgId = org.body.id;
    expect((await call('POST', `/admin/v1/organizations/${orgId}/signing-secret`, ADMIN_TOKEN)).status).toBe(201);
    const key = await call('POST', `/admin/v1/organizations/${orgId}/api-keys`, ADMIN_TOKEN, { name: 'test' });
    expect(key.status).toBe(201);

    // A delivery to a slow receiver is in flight when the signal arrives.
    receiver.respondWith('/slow', { status: 200, delayMs: 1_500 });
    const first = await call('POST', '/storefront/v1/shutdown-windows/leads', undefined, { name: 'Jane', email: 'jane@example.com', message: 'Hello' });
    expect(first.status).toBe(201);
    const [attempt] = await receiver.waitFor((r) => r.path === '/slow');
    const firstDelivery = attempt.headers['x-service-delivery'] as string;

    // So is a request whose body is still arriving.
    const slow = slowLead('shutdown-windows');
    await new Promise((resolve) => setTimeout(resolve, 200));
    product.child.kill('SIGTERM');
    // The listener closes once the child handles the signal: refused from then on.
    await until('the listener closed', async () => fetch(`${product!.baseUrl}/healthz`).then(() => false, () => true));
    slow.sendRest();
    expect(await slow.answered).toBe(201);

    expect(await product.exited).toBe(0);
    const messages = product.logs().map((line) => line.msg);
    expect(messages).toEqual(expect.arrayContaining(['shutting down', 'stopped']));

    product = await startProduct(env());
    const deliveredBoth = async () => {
      const list = await call('GET', '/api/v1/events?type=lead.created', key.body.key);
      return list.body.data as Array<{ id: string; status: string; attempts: number }>;
    };
    let deliveries: Array<{ id: string; status: string; attempts: number }> = [];
    for (let waited = 0; waited < 15_000; waited += 100) {
      deliveries = await deliveredBoth();
      if (deliveries.length === 2 && deliveries.every((d) => d.status === 'delivered')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(deliveries.map((d) => d.status)).toEqual(['delivered', 'delivered']);
    // The attempt that finished during the shutdown was recorded: it is not made again.
    expect(deliveries.find((d) => d.id === firstDelivery)).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(receiver.requests('/slow').filter((r) => r.headers['x-service-delivery'] === firstDelivery)).toHaveLength(1);
    // Both leads exist: the request answered during the shutdown was not lost.
    const leads = await call('GET', '/api/v1/leads', key.body.key);
    expect(leads.body.data.map((l: { name: string }) => l.name).sort()).toEqual(['Jane', 'Slow Sam']);

    product.child.kill('SIGTERM');
    expect(await product.exited).toBe(0);
  }, 120_000);

  it('closes the connection of a request in flight when it stops, so a kept-alive client does not hold the drain, and exits 0 at once', async () => {
    product = await startProduct(env());
    const org = await call('POST', '/admin/v1/organizations', ADMIN_TOKEN, { name: 'Closing Windows', slug: 'closing-windows' });
    expect(org.status).toBe(201);
    // A keep-alive request is in flight (its body still arriving) when the signal comes.
    const body = JSON.stringify({ name: 'Kept Alive', email: 'kept@example.com', message: 'Kept alive' });
    const url = new URL(product.baseUrl);
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write(
      `POST /storefront/v1/closing-windows/leads HTTP/1.1\r\nHost: ${url.host}\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const signalled = Date.now();
    product.child.kill('SIGTERM');
    await until('the listener closed', async () => fetch(`${product!.baseUrl}/healthz`).then(() => false, () => true));
    socket.write(body.slice(10));
    await closed;
    expect(received.split('\r\n', 1)[0]).toBe('HTTP/1.1 201 Created');
    expect(received).toMatch(/\r\nconnection: close\r\n/i);
    expect(await product.exited).toBe(0);
    // Not SHUTDOWN_TIMEOUT_MS (5 s here), which a connection kept alive held it for.
    expect(Date.now() - signalled).toBeLessThan(4_000);
  }, 120_000);

  it('with SHUTDOWN_NOT_READY_MS, answers /readyz 503 and still serves requests for that long before it stops accepting', async () => {
    product = await startProduct({ ...env(), SHUTDOWN_NOT_READY_MS: '2000' });
    expect((await fetch(`${product.baseUrl}/readyz`)).status).toBe(200);
    const signalled = Date.now();
    product.child.kill('SIGTERM');
    // Not ready once the child handles the signal, well within the 2 s it keeps serving.
    const ready = await until('/readyz at 503', async () => {
      const answer = await fetch(`${product!.baseUrl}/readyz`);
      return answer.status === 503 ? answer : null;
    });
    expect(Date.now() - signalled).toBeLessThan(1_500);
    expect(JSON.stringify(await ready.json())).toContain('process');
    expect((await call('GET', '/storefront/v1/shutdown-windows')).status).toBe(200);
    expect(await product.exited).toBe(0);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(2_000);
  }, 120_000);
});
