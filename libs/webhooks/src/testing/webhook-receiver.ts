import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request as the receiver got it: the raw body is what signatures are checked against. */
export interface ReceivedWebhook {
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: any;
  receivedAt: number;
}

/** How the receiver answers one request: a status, a status after a delay, or never. */
export type ReceiverBehavior = number | 'hang' | { status: number; delayMs: number };

/**
 * A real HTTP receiver on 127.0.0.1 for tests and local experiments. Each path has a queue of
 * behaviors; once it is empty the path answers 200.
 */
export class WebhookReceiver {
  private readonly received: ReceivedWebhook[] = [];
  private readonly behaviors = new Map<string, ReceiverBehavior[]>();
  private readonly sockets = new Set<Socket>();
  private readonly waiters = new Set<() => void>();

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = http.createServer();
    const receiver = new WebhookReceiver(server);
    server.on('connection', (socket) => {
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    server.on('request', (req, res) => receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = '/hooks'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Queues how the next requests to `path` are answered. */
  respondWith(path: string, ...behaviors: ReceiverBehavior[]): void {
    this.behaviors.set(path, [...(this.behaviors.get(path) ?? []), ...behaviors]);
  }

  requests(path?: string): ReceivedWebhook[] {
    return this.received.filter((r) => path === undefined || r.path === path);
  }

  /** Resolves with the matching requests once there are at least `count` of them. */
  async waitFor(match: (r: ReceivedWebhook) => boolean, count = 1, timeoutMs = 10_000): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.filter(match);
      if (found.length >= count) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} matching webhook request(s), got ${found.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(left, 100));
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.add(done);
      });
    }
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = rawBody;
      }
      this.received.push({ path, headers: req.headers, rawBody, body, receivedAt: Date.now() });
      for (const wake of [...this.waiters]) wake();
      this.waiters.clear();
      const behavior = this.behaviors.get(path)?.shift() ?? 200;
      if (behavior === 'hang') return;
      if (typeof behavior === 'number') {
        res.writeHead(behavior, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      setTimeout(() => res.writeHead(behavior.status).end(), behavior.delayMs);
    });
  }
}
