import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { bareHostname, parseWebhookUrl, resolveWebhookTarget, WebhookTargetRefused, type ResolveAll, type ResolvedAddress } from './webhook-url-policy';

/** The transport error classes `lastError` can hold (besides `HTTP <status>`). */
export type TransportError =
  | 'timeout'
  | 'connection_refused'
  | 'connection_reset'
  | 'dns_error'
  | 'tls_error'
  | 'host_unreachable'
  | 'blocked_address'
  | 'invalid_url'
  | 'invalid_response'
  | 'network_error';

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** the whole attempt: resolution, connection, request and the response status line */
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

export type SendResult = { kind: 'response'; status: number } | { kind: 'error'; error: TransportError };

/** Posts one webhook attempt. Replaced by a fake in tests that need no network. */
export abstract class WebhookSender {
  abstract send(request: WebhookRequest): Promise<SendResult>;
  /** Releases pooled connections. */
  close(): void {}
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH|EPROTO$)/;

/** Maps a Node socket/TLS/HTTP error to the class shown in `lastError`. */
export function classifyTransportError(error: unknown): TransportError {
  if (error instanceof WebhookTargetRefused) return error.reason;
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection_refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection_reset';
    case 'ETIMEDOUT':
    case 'ESOCKETTIMEDOUT':
      return 'timeout';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NODATA':
    case 'EAI_NONAME':
      return 'dns_error';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EHOSTDOWN':
    case 'ENETDOWN':
      return 'host_unreachable';
    default:
      if (TLS_CODES.test(code)) return 'tls_error';
      if (code.startsWith('HPE_')) return 'invalid_response';
      return 'network_error';
  }
}

/** Makes the socket connect to the address that was checked, whatever DNS says by then. */
function pinnedLookup(target: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

const MAX_RESPONSE_BYTES = 64 * 1024;
const RESPONSE_DRAIN_MS = 5_000;
const USER_AGENT = 'window-quoting-service-webhooks/1.0';

/**
 * SSRF-safe webhook POSTs with node:http(s): http/https only; the host is resolved once and every
 * address checked (unless private networks are allowed); the socket connects to the checked
 * address while Host and TLS SNI/certificate checks keep the URL's host name; redirects are not
 * followed (a 3xx is just a status). Connections are kept alive and pooled per host.
 */
export class NodeWebhookSender extends WebhookSender {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' });

  constructor(private readonly resolveAll?: ResolveAll) {
    super();
  }

  async send(request: WebhookRequest): Promise<SendResult> {
    const controller = new AbortController();
    const aborted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(new Error('attempt timed out')), { once: true });
    });
    aborted.catch(() => undefined);
    const timer = setTimeout(() => controller.abort(), request.timeoutMs);
    try {
      const url = parseWebhookUrl(request.url);
      const target = await Promise.race([
        resolveWebhookTarget(url, { allowPrivateNetworks: request.allowPrivateNetworks, resolveAll: this.resolveAll }),
        aborted,
      ]);
      const status = await Promise.race([this.post(url, target, request, controller.signal), aborted]);
      return { kind: 'response', status };
    } catch (error) {
      if (controller.signal.aborted) return { kind: 'error', error: 'timeout' };
      return { kind: 'error', error: classifyTransportError(error) };
    } finally {
      clearTimeout(timer);
    }
  }

  override close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private post(url: URL, target: ResolvedAddress, request: WebhookRequest, signal: AbortSignal): Promise<number> {
    const secure = url.protocol === 'https:';
    const options: https.RequestOptions = {
      method: 'POST',
      protocol: url.protocol,
      hostname: bareHostname(url),
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(request.body)),
        'user-agent': USER_AGENT,
        ...request.headers,
      },
      agent: secure ? this.httpsAgent : this.httpAgent,
      lookup: pinnedLookup(target),
      signal,
      ...(url.username ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` } : {}),
    };
    return new Promise<number>((resolve, reject) => {
      const outgoing = (secure ? https : http).request(options, (response) => {
        resolve(response.statusCode ?? 0);
        drain(response);
      });
      outgoing.on('error', reject);
      outgoing.end(request.body);
    });
  }
}

/** Reads and discards a bounded response body so the connection can be reused. */
function drain(response: http.IncomingMessage): void {
  let received = 0;
  const timer = setTimeout(() => response.destroy(), RESPONSE_DRAIN_MS);
  timer.unref();
  response.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > MAX_RESPONSE_BYTES) response.destroy();
  });
  response.on('error', () => undefined);
  response.on('close', () => clearTimeout(timer));
}
