import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyTransportError, NodeWebhookSender } from './webhook-sender';
import { assertWebhookUrlsAllowed, type ResolveAll } from './webhook-url-policy';

interface Received {
  host: string | undefined;
  url: string | undefined;
  body: string;
}

describe('NodeWebhookSender (SSRF-safe POST)', () => {
  let server: http.Server;
  let port: number;
  let received: Received[];
  let respond: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  const names: Record<string, string[]> = {};
  const resolveAll: ResolveAll = async (host) => {
    const addresses = names[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const sender = new NodeWebhookSender(resolveAll);
  const send = (url: string, options: { allowPrivateNetworks?: boolean; timeoutMs?: number } = {}) =>
    sender.send({ url, body: '{"ok":true}', headers: { 'X-Test': '1' }, timeoutMs: options.timeoutMs ?? 2_000, allowPrivateNetworks: options.allowPrivateNetworks ?? true });

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ host: req.headers.host, url: req.url, body });
        respond(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    names['receiver.test'] = ['127.0.0.1'];
    names['mixed.test'] = ['93.184.216.34', '10.0.0.7'];
    names['public.test'] = ['93.184.216.34'];
  });
  beforeEach(() => {
    received = [];
    respond = (_req, res) => res.writeHead(204).end();
  });
  afterAll(async () => {
    sender.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('given a host name, then it connects to the address it checked and keeps Host, path and query', async () => {
    const result = await send(`http://receiver.test:${port}/hooks/in?x=1`);
    expect(result).toEqual({ kind: 'response', status: 204 });
    expect(received).toEqual([{ host: `receiver.test:${port}`, url: '/hooks/in?x=1', body: '{"ok":true}' }]);
  });

  it('given private networks are not allowed, then a host resolving to loopback is refused before any connection', async () => {
    expect(await send(`http://receiver.test:${port}/`, { allowPrivateNetworks: false })).toEqual({ kind: 'error', error: 'blocked_address' });
    expect(received).toEqual([]);
  });

  it.each([
    ['a literal loopback address', (p: number) => `http://127.0.0.1:${p}/`],
    ['an IPv4-mapped IPv6 literal', (p: number) => `http://[::ffff:127.0.0.1]:${p}/`],
    ['a decimal-encoded IPv4 literal', (p: number) => `http://2130706433:${p}/`],
    ['a host with one private address among public ones', (p: number) => `http://mixed.test:${p}/`],
  ])('given %s, then it is refused', async (_name, url) => {
    expect(await send(url(port), { allowPrivateNetworks: false })).toEqual({ kind: 'error', error: 'blocked_address' });
    expect(received).toEqual([]);
  });

  it('given a redirect, then it is not followed: the 3xx is the outcome', async () => {
    respond = (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere` }).end();
    expect(await send(`http://receiver.test:${port}/hook`)).toEqual({ kind: 'response', status: 302 });
    expect(received.map((r) => r.url)).toEqual(['/hook']);
  });

  it('given a receiver that never answers, then the attempt ends as a timeout', async () => {
    respond = () => undefined;
    const started = Date.now();
    expect(await send(`http://receiver.test:${port}/`, { timeoutMs: 200 })).toEqual({ kind: 'error', error: 'timeout' });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('given transport failures, then each is classified', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await send(`http://127.0.0.1:${closedPort}/`)).toEqual({ kind: 'error', error: 'connection_refused' });
    expect(await send('http://nowhere.test/')).toEqual({ kind: 'error', error: 'dns_error' });
    expect(await send(`https://receiver.test:${port}/`)).toEqual({ kind: 'error', error: 'tls_error' });
    expect(await send('ftp://receiver.test/')).toEqual({ kind: 'error', error: 'invalid_url' });
  });

  it('classifies node error codes', () => {
    const error = (code: string) => Object.assign(new Error(code), { code });
    expect(classifyTransportError(error('ECONNRESET'))).toBe('connection_reset');
    expect(classifyTransportError(error('EHOSTUNREACH'))).toBe('host_unreachable');
    expect(classifyTransportError(error('CERT_HAS_EXPIRED'))).toBe('tls_error');
    expect(classifyTransportError(error('ERR_TLS_CERT_ALTNAME_INVALID'))).toBe('tls_error');
    expect(classifyTransportError(error('HPE_INVALID_CONSTANT'))).toBe('invalid_response');
    expect(classifyTransportError(new Error('?'))).toBe('network_error');
  });

  describe('assertWebhookUrlsAllowed (admin settings)', () => {
    const check = (settings: Record<string, string | null>, allowPrivateNetworks = false) => assertWebhookUrlsAllowed(settings, { allowPrivateNetworks, resolveAll });

    it('given public or not-yet-resolvable hosts, or null, then the URLs are accepted', async () => {
      await expect(check({ webhookUrl: 'https://public.test/hooks', pricingWebhookUrl: null })).resolves.toBeUndefined();
      await expect(check({ webhookUrl: 'https://not-yet-registered.test/hooks' })).resolves.toBeUndefined();
    });

    it('given private targets, then 422 names each field', async () => {
      await expect(check({ webhookUrl: 'http://169.254.169.254/latest/meta-data', pricingWebhookUrl: 'http://receiver.test/p' })).rejects.toMatchObject({
        code: 'validation_error',
        details: { fields: [{ path: 'settings.webhookUrl' }, { path: 'settings.pricingWebhookUrl' }] },
      });
    });

    it('given WEBHOOK_ALLOW_PRIVATE_NETWORKS, then private targets are accepted', async () => {
      await expect(check({ webhookUrl: 'http://127.0.0.1:8080/hooks' }, true)).resolves.toBeUndefined();
    });
  });
});
