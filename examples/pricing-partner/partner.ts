/**
 * Reference pricing partner: what an external pricing system does with `pricing.calculated`.
 *
 *   1. receive the webhook and verify `X-Service-Signature` with the organization's signing secret;
 *   2. acknowledge at once (2xx) — the price is computed afterwards, never while the service waits;
 *   3. skip a delivery it has already handled: the same delivery id *and* generation (a retry);
 *   4. apply a markup to `data.basePricing.lineItems` and PUT them to `data.callback.url`.
 *
 * Written only from api-v1.md and decisions.md, with Node's standard library, plus the delivery
 * generation that the service adds (docs/decisions/webhooks.md, "Telling a redelivery from a retry").
 *
 * Environment:
 *   WEBHOOK_SECRET          the signing secret (`whsec_…`, from POST /admin/v1/organizations/{id}/signing-secret) — required
 *   PARTNER_PORT / _HOST    where to listen (default 4000 / 127.0.0.1)
 *   PARTNER_MARKUP_PERCENT  markup on every unit price (default 10)
 *   PARTNER_DELAY_MS        simulated thinking time before answering (default 0)
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const MAX_BODY_BYTES = 1024 * 1024;
/** Signatures older (or newer) than this are refused: a captured delivery cannot be replayed later. */
const SIGNATURE_TOLERANCE_S = 300;
const MAX_ANSWER_ATTEMPTS = 3;
/** How many handled deliveries are remembered; retries come within minutes, so the oldest can go. */
const REMEMBERED_DELIVERIES = 10_000;

interface LineItem {
  description: string;
  quantity: number;
  unitPrice: number;
  itemType?: string;
  itemKey?: string;
  sortOffset?: number;
}

interface PricingCalculated {
  id: string;
  event: string;
  data: {
    context: string;
    configHash: string;
    basePricing: { lineItems: LineItem[]; subtotal: number };
    session?: { id: string };
    submission?: { id: string };
    callback: { url: string; timeoutMs: number; generation: number };
  };
}

interface Settings {
  secret: string;
  port: number;
  host: string;
  markupPercent: number;
  delayMs: number;
}

function settingsFrom(env: NodeJS.ProcessEnv): Settings {
  const number = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) fail(`${name} must be a non-negative number, got "${raw}"`);
    return value;
  };
  const secret = env.WEBHOOK_SECRET?.trim();
  if (!secret) fail('WEBHOOK_SECRET is required: the signing secret of the organization (whsec_…)');
  return {
    secret,
    port: number('PARTNER_PORT', 4000),
    host: env.PARTNER_HOST || '127.0.0.1',
    markupPercent: number('PARTNER_MARKUP_PERCENT', 10),
    delayMs: number('PARTNER_DELAY_MS', 0),
  };
}

function fail(message: string): never {
  process.stderr.write(`pricing-partner: ${message}\n`);
  process.exit(1);
}

const log = (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);

/** The callback URL holds a credential: it is never written to a log. */
const redacted = (url: string) => url.replace(/\/configuration-sessions\/[^/]+/, '/configuration-sessions/…');

/** decisions §9: `t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, one `v1` per live secret. */
export function verifySignature(header: string | undefined, rawBody: Buffer, secret: string, nowS = Math.floor(Date.now() / 1000)): boolean {
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

/** The partner's price: the base breakdown with a markup on every unit price, rounded to cents. */
export function withMarkup(items: LineItem[], markupPercent: number): LineItem[] {
  return items.map(({ description, quantity, unitPrice, itemType, itemKey, sortOffset }) => ({
    description,
    quantity,
    unitPrice: Math.round(unitPrice * (100 + markupPercent)) / 100,
    ...(itemType !== undefined && { itemType }),
    ...(itemKey !== undefined && { itemKey }),
    ...(sortOffset !== undefined && { sortOffset }),
  }));
}

/**
 * The deliveries already handled, keyed by (delivery id, generation). The delivery id
 * (X-Service-Delivery) stays the same on retries *and* redeliveries; a redelivery is a new
 * generation whose callback URL replaces the previous one, which then answers 401. So a retry is
 * dropped and a redelivery is answered. Both values are read from the signed body (`id` and
 * `data.callback.generation`, equal to X-Service-Delivery and X-Service-Delivery-Generation),
 * which X-Service-Signature covers and the headers are not.
 */
class HandledDeliveries {
  private readonly seen = new Set<string>();

  constructor(private readonly capacity = REMEMBERED_DELIVERIES) {}

  /** True the first time a (delivery id, generation) is seen, false for a repeat. */
  firstTime(deliveryId: string, generation: number): boolean {
    const key = `${deliveryId}#${generation}`;
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    if (this.seen.size > this.capacity) this.seen.delete(this.seen.values().next().value!);
    return true;
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** PUTs the answer; a 429 waits for Retry-After and a 5xx or network error is tried again, anything else is final. */
async function answer(event: PricingCalculated, settings: Settings): Promise<void> {
  const { callback, configHash, basePricing, context } = event.data;
  const subject = event.data.submission ? `submission=${event.data.submission.id}` : `session=${event.data.session?.id}`;
  const body = JSON.stringify({ configHash, lineItems: withMarkup(basePricing.lineItems, settings.markupPercent) });
  if (settings.delayMs) await pause(settings.delayMs);
  for (let attempt = 1; attempt <= MAX_ANSWER_ATTEMPTS; attempt++) {
    let response: Response;
    try {
      response = await fetch(callback.url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
    } catch (error) {
      log(`${context} ${subject}: PUT ${redacted(callback.url)} failed (${(error as Error).message}), attempt ${attempt}`);
      await pause(250 * attempt);
      continue;
    }
    const result = (await response.json().catch(() => null)) as { isCurrentConfiguration?: boolean; error?: { code: string; details?: { currentConfigHash?: string } } } | null;
    if (response.ok) {
      log(`${context} ${subject}: priced ${configHash.slice(0, 15)}… with +${settings.markupPercent} % → 200 (current: ${result?.isCurrentConfiguration})`);
      return;
    }
    const code = result?.error?.code ?? `HTTP ${response.status}`;
    if (response.status === 429 || response.status >= 500) {
      const wait = Number(response.headers.get('retry-after') ?? 0) * 1000 || 250 * attempt;
      log(`${context} ${subject}: ${code}, retrying in ${wait} ms`);
      await pause(wait);
      continue;
    }
    // 409 stale_config_hash: the customer changed the configuration; its own event is on its way.
    // 401 / 403 / 410: superseded, live pricing off, window over or session expired — nothing to do.
    log(`${context} ${subject}: ${code}${code === 'stale_config_hash' ? ' (a newer event follows)' : ''} — not retried`);
    return;
  }
}

export function startPartner(settings: Settings) {
  const handled = new HandledDeliveries();
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const reply = (status: number) => response.writeHead(status).end();
    if (request.method !== 'POST') return reply(405);
    const raw = await readBody(request);
    if (!raw) return reply(413);
    const signature = request.headers['x-service-signature'];
    if (!verifySignature(Array.isArray(signature) ? signature[0] : signature, raw, settings.secret)) {
      log(`refused a delivery with a missing or wrong signature (${request.headers['x-service-delivery'] ?? 'no delivery id'})`);
      return reply(401);
    }
    let event: PricingCalculated;
    try {
      event = JSON.parse(raw.toString('utf8'));
    } catch {
      return reply(400);
    }
    reply(200);
    if (event.event !== 'pricing.calculated') return log(`${event.event}: acknowledged`);
    const generation = event.data?.callback?.generation;
    if (!handled.firstTime(event.id, generation)) return log(`${event.id} generation ${generation}: already handled (a retry), acknowledged`);
    answer(event, settings).catch((error) => log(`answering ${event.id} failed: ${String(error)}`));
  });
  server.listen(settings.port, settings.host, () => {
    log(`pricing partner listening on http://${settings.host}:${settings.port}/ (markup ${settings.markupPercent} %)`);
  });
  return server;
}

if (require.main === module) {
  const server = startPartner(settingsFrom(process.env));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
}
