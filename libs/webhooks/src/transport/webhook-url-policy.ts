import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import { ValidationFailed, type FieldError } from '@lib/shared';
import { classifyAddress, type AddressClass } from './address-policy';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** `dns.lookup` with every address (A and AAAA), as the operating system resolves it. */
export type ResolveAll = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolveAll: ResolveAll = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error) reject(error);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

/** Why a URL may not receive webhooks. */
export class WebhookTargetRefused extends Error {
  constructor(
    /** `invalid_url`, `dns_error` or `blocked_address` */
    readonly reason: 'invalid_url' | 'dns_error' | 'blocked_address',
    message: string,
    readonly addressClass?: AddressClass,
  ) {
    super(message);
    this.name = 'WebhookTargetRefused';
  }
}

/** Only absolute http(s) URLs with a host. */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookTargetRefused('invalid_url', 'is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookTargetRefused('invalid_url', 'must be an http or https URL');
  if (!url.hostname) throw new WebhookTargetRefused('invalid_url', 'must have a host');
  return url;
}

/** The host of a parsed URL as a resolver or socket takes it (IPv6 literals without brackets). */
export function bareHostname(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Resolves the URL's host once and checks every address it resolves to: one private address
 * among public ones refuses the whole host (DNS answers are attacker-controlled). Returns the
 * address to connect to, so the connection goes exactly where the check looked.
 */
export async function resolveWebhookTarget(
  url: URL,
  options: { allowPrivateNetworks: boolean; resolveAll?: ResolveAll; resolveTimeoutMs?: number },
): Promise<ResolvedAddress> {
  const host = bareHostname(url);
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await withTimeout((options.resolveAll ?? systemResolveAll)(host), options.resolveTimeoutMs);
    } catch {
      throw new WebhookTargetRefused('dns_error', `the host ${host} does not resolve`);
    }
    if (addresses.length === 0) throw new WebhookTargetRefused('dns_error', `the host ${host} does not resolve`);
  }
  if (!options.allowPrivateNetworks) {
    for (const { address } of addresses) {
      const cls = classifyAddress(address);
      if (cls !== 'public') {
        throw new WebhookTargetRefused('blocked_address', `resolves to a ${cls.replace(/_/g, '-')} address, which cannot receive webhooks`, cls);
      }
    }
  }
  return addresses[0];
}

function withTimeout<T>(promise: Promise<T>, ms: number | undefined): Promise<T> {
  if (ms === undefined) return promise;
  let timer: NodeJS.Timeout;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('resolution timed out')), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Checks webhook URLs when an admin sets them (decisions §1 WEBHOOK_ALLOW_PRIVATE_NETWORKS): http
 * or https, and no host resolving to a loopback, private, link-local, unique-local, multicast or
 * otherwise non-public address. A host that does not resolve (yet) is accepted: every delivery
 * attempt resolves and checks again, and that check is the one that protects.
 * Throws 422 `validation_error` with paths such as `settings.webhookUrl`.
 */
export async function assertWebhookUrlsAllowed(
  settings: { webhookUrl?: string | null; pricingWebhookUrl?: string | null } | undefined,
  options: { allowPrivateNetworks: boolean; resolveAll?: ResolveAll; pathPrefix?: string },
): Promise<void> {
  if (!settings) return;
  const prefix = options.pathPrefix ?? 'settings.';
  const fields: FieldError[] = [];
  for (const field of ['webhookUrl', 'pricingWebhookUrl'] as const) {
    const raw = settings[field];
    if (typeof raw !== 'string') continue;
    try {
      await resolveWebhookTarget(parseWebhookUrl(raw), { resolveTimeoutMs: 3_000, ...options });
    } catch (error) {
      if (!(error instanceof WebhookTargetRefused)) throw error;
      if (error.reason === 'dns_error') continue;
      fields.push({ path: `${prefix}${field}`, message: `${field} ${error.message}` });
    }
  }
  if (fields.length) throw new ValidationFailed(fields);
}
