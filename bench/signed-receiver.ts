/**
 * A webhook receiver on 127.0.0.1 in the benchmark process, as a partner writes one: it reads the
 * raw body, verifies `X-Service-Signature` (`t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`,
 * any v1 may match, ±300 s) and answers 200 at once; a wrong signature gets 401 and is counted.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

const SIGNATURE_TOLERANCE_S = 300;

export interface ReceivedDelivery {
  /** performance.now() when the whole body had arrived */
  at: number;
  deliveryId: string;
  eventHeader: string;
  body: any;
}

export function verifyServiceSignature(header: string | undefined, rawBody: Buffer, secret: string, nowS = Math.floor(Date.now() / 1000)): boolean {
  if (!header) return false;
  const parts = header.split(',').map((p) => p.trim());
  const t = parts.find((p) => p.startsWith('t='))?.slice(2);
  if (!t || !/^\d+$/.test(t) || Math.abs(nowS - Number(t)) > SIGNATURE_TOLERANCE_S) return false;
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
  return parts
    .filter((p) => p.startsWith('v1='))
    .some((p) => {
      const given = Buffer.from(p.slice(3), 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

export class SignedReceiver {
  secret = '';
  badSignatures = 0;
  unparsable = 0;
  requests = 0;
  private server!: Server;
  url = '';

  /** `onDelivery` runs after the 200 has been written (a partner acknowledges first). */
  constructor(private readonly onDelivery: (delivery: ReceivedDelivery) => void) {}

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const at = performance.now();
        this.requests++;
        const raw = Buffer.concat(chunks);
        const signature = request.headers['x-service-signature'];
        if (!verifyServiceSignature(Array.isArray(signature) ? signature[0] : signature, raw, this.secret)) {
          this.badSignatures++;
          response.writeHead(401).end();
          return;
        }
        let body: any;
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          this.unparsable++;
          response.writeHead(400).end();
          return;
        }
        response.writeHead(200, { 'content-length': '0' }).end();
        this.onDelivery({ at, deliveryId: String(request.headers['x-service-delivery'] ?? ''), eventHeader: String(request.headers['x-service-event'] ?? ''), body });
      });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks`;
    return this.url;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
