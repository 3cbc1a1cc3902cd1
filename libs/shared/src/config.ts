import { isIP } from 'node:net';
import { resolve } from 'node:path';

/** Configuration of every process, read once from the environment (decisions §1). */
export interface AppConfig {
  port: number;
  host: string;
  publicBaseUrl: string;
  dataDir: string;
  adminToken: string | undefined;
  seedDemo: boolean;
  eventStoreUrl: string | undefined;
  mongodbUrl: string | undefined;
  kafkaBrokers: string[] | undefined;
  /** client id the Kafka brokers see in their logs and quotas */
  kafkaClientId: string;
  /** put in front of every Kafka topic and consumer group, so tenants and test runs can share brokers */
  kafkaTopicPrefix: string;
  /** partitions of the topics the service creates: the most outbox processes that work at once */
  kafkaTopicPartitions: number;
  kafkaReplicationFactor: number;
  /** `retention.ms` of the topics the service creates; -1 keeps messages forever */
  kafkaRetentionMs: number;
  /** age past which the embedded bus deletes messages every group has consumed; -1 keeps them */
  embeddedBusRetentionMs: number;
  pricingTokenWindowMs: number;
  sessionIdleTtlMs: number;
  webhookRetryScheduleMs: number[];
  pricingRetryScheduleMs: number[];
  webhookAllowPrivateNetworks: boolean;
  /** per-attempt timeout of ordinary webhook deliveries (decisions §9: 10 s) */
  webhookAttemptTimeoutMs: number;
  /** webhook attempts in flight at once per outbox process */
  webhookDispatchConcurrency: number;
  quoteExpiryCheckMs: number;
  rateLimitIpPerMin: number;
  rateLimitKeyPerMin: number;
  rateLimitCapabilityPerMin: number;
  /** key of the pricing capability tokens; when unset a key is generated into DATA_DIR */
  pricingTokenSecret: string | undefined;
  /** SMTP server of the quote e-mails (`smtp://` or `smtps://`); unset: mails are written under DATA_DIR/mail */
  smtpUrl: string | undefined;
  /** sender of the quote e-mails */
  mailFrom: string;
  /** delay before each attempt of a quote e-mail; its length is the number of attempts */
  mailRetryScheduleMs: number[];
  /** delay before each attempt to generate a quote PDF; its length is the number of attempts */
  pdfRetryScheduleMs: number[];
  /** key of the signed file links (PDF downloads); when unset a key is generated into DATA_DIR */
  fileLinkSecret: string | undefined;
  /** key the customers' quote links are derived with; when unset a key is generated into DATA_DIR */
  quoteLinkSecret: string | undefined;
  /** key the webhook signing secrets are sealed with in the events; when unset a key is generated into DATA_DIR */
  signingSecretKey: string | undefined;
  /** keys `signingSecretKey` replaced: secrets sealed with them still open, nothing new is sealed with them */
  signingSecretPreviousKeys: string[];
  /** lifetime of a signed file link */
  fileLinkTtlMs: number;
  /** pino level of the JSON logs; `silent` turns them off */
  logLevel: LogLevel;
  /** /readyz fails while a projection is more than this many events behind the head of the log */
  readyMaxProjectionLag: number;
  /** standalone projector and outbox serve /healthz, /readyz and /metrics on this port when set */
  opsPort: number | undefined;
  /** how long a SIGTERM waits for in-flight requests and deliveries before closing anyway */
  shutdownTimeoutMs: number;
  /** how long a gateway keeps accepting requests after a SIGTERM with /readyz at 503, so that a load balancer polling it stops sending new ones first */
  shutdownNotReadyMs: number;
  /** which proxies may name the client in X-Forwarded-For (Fastify's trustProxy): per-IP rate limits and idempotency scopes */
  trustProxy: boolean | number | string;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Bad configuration stops start-up with one line naming the variable. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

/**
 * The longest delay setTimeout/setInterval take: Node turns anything longer into 1 ms (with a
 * TimeoutOverflowWarning), so a duration that goes to a timer is capped here.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** The longest window or idle time (10 years): now plus it stays an exact Unix ms timestamp a Date can hold. */
const MAX_PERIOD_MS = 10 * 365 * 86_400_000;

/** Error codes of a listen() that the host or the port it was given explains. */
const HOST_LISTEN_ERRORS = ['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EADDRNOTAVAIL'];
const PORT_LISTEN_ERRORS = ['EADDRINUSE', 'EACCES'];

/**
 * A listen() failure as the variable it comes from: an unknown or foreign address names HOST, a
 * taken or privileged port names the port's variable. Any other error is returned as it is.
 */
export function listenFailure(error: unknown, portVariable: 'PORT' | 'OPS_PORT'): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code ?? '';
  const variable = HOST_LISTEN_ERRORS.includes(code) ? 'HOST' : PORT_LISTEN_ERRORS.includes(code) ? portVariable : null;
  return variable ? new ConfigError(variable, `cannot be listened on (${(error as Error).message})`) : error;
}

/** The one line a failed start-up leaves on stderr: a ConfigError as it is, anything else after "start-up failed:". */
export function startUpFailureLine(error: unknown): string {
  if (error instanceof ConfigError) return error.message;
  return `start-up failed: ${error instanceof Error ? error.message : String(error)}`;
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

/**
 * A retry schedule: delays in ms, each at most MAX_TIMER_MS (24.8 days). A longer one would put
 * `scheduledFor` past what a timer can wait (and, past 2^53, past an exact Unix ms timestamp).
 */
function schedule(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+$/.test(p))) {
    throw new ConfigError(name, `must be a comma-separated list of milliseconds, got "${raw}"`);
  }
  const delays = parts.map(Number);
  const tooLong = delays.findIndex((delay) => delay > MAX_TIMER_MS);
  if (tooLong >= 0) throw new ConfigError(name, `delays must be at most ${MAX_TIMER_MS} ms (24.8 days); entry ${tooLong + 1} is ${parts[tooLong]}`);
  return delays;
}

/** Names proxy-addr (Fastify's trustProxy) gives address ranges. */
const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * Which proxies in front of the gateway are trusted to name the client in X-Forwarded-For, as
 * Fastify's `trustProxy` takes it: `true` (every hop: only when the one proxy in front strips
 * what clients send), a number of hops (`1`: the proxy right in front), or the proxies' addresses
 * (IPs, CIDRs, `loopback`, `linklocal`, `uniquelocal`). Unset or `false`: the socket's address.
 */
function trustProxy(env: Env, name: string): boolean | number | string {
  const raw = optional(env, name)?.trim();
  if (raw === undefined || raw === '' || raw.toLowerCase() === 'false') return false;
  if (raw.toLowerCase() === 'true') return true;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops >= 1 && hops <= 100) return hops;
  } else {
    const entries = raw.split(',').map((entry) => entry.trim());
    const valid = (entry: string) => {
      if (PROXY_RANGES.includes(entry)) return true;
      const [address, prefix, ...rest] = entry.split('/');
      const family = isIP(address);
      if (family === 0 || rest.length > 0) return false;
      return prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
    };
    if (entries.every(valid)) return entries.join(',');
  }
  throw new ConfigError(name, `must be true, false, a number of proxy hops (1 to 100), or the proxies' addresses (IPs or CIDRs, comma-separated, or loopback, linklocal, uniquelocal); got "${raw}"`);
}

function secret(env: Env, name: string, minLength: number): string | undefined {
  const raw = optional(env, name);
  if (raw !== undefined && raw.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters`);
  return raw;
}

/** A comma-separated list of keys, each as `secret` wants it; blank entries are skipped. Never echoes a key. */
function secrets(env: Env, name: string, minLength: number): string[] {
  const keys = (optional(env, name) ?? '').split(',').map((key) => key.trim()).filter(Boolean);
  const short = keys.findIndex((key) => key.length < minLength);
  if (short >= 0) throw new ConfigError(name, `must be a comma-separated list of keys of at least ${minLength} characters each (key ${short + 1} is shorter)`);
  return keys;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = optional(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

function optional(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw ? raw : undefined;
}

function smtpUrl(env: Env, name: string): string | undefined {
  const raw = optional(env, name);
  if (raw === undefined) return undefined;
  let protocol = '';
  try {
    protocol = new URL(raw).protocol;
  } catch {
    // reported below without echoing the value: it may hold a password
  }
  if (!['smtp:', 'smtps:'].includes(protocol)) throw new ConfigError(name, 'must be an smtp:// or smtps:// URL');
  return raw;
}

/** `quotes@example.com` or `Name <quotes@example.com>`. */
function mailbox(env: Env, name: string, fallback: string): string {
  const raw = optional(env, name) ?? fallback;
  if (!/^(?:[^<>\r\n]*<[^<>@\s]+@[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+)$/.test(raw)) {
    throw new ConfigError(name, `must be an e-mail address or "Name <address>", got "${raw}"`);
  }
  return raw;
}

function brokers(env: Env, name: string): string[] | undefined {
  const raw = optional(env, name);
  if (raw === undefined) return undefined;
  const list = raw.split(',').map((b) => b.trim()).filter(Boolean);
  const bad = list.find((b) => !/^(\[[0-9a-fA-F:.]+\]|[^\s:/\[\]]+):\d{1,5}$/.test(b) || Number(b.slice(b.lastIndexOf(':') + 1)) > 65535);
  if (list.length === 0 || bad !== undefined) {
    throw new ConfigError(name, `must be a comma-separated list of host:port, got "${raw}"`);
  }
  return list;
}

/** Kafka's legal characters for topic names, client ids and the like. */
function kafkaName(env: Env, name: string, fallback: string, maxLength: number): string {
  const raw = env[name]?.trim() ?? '';
  if (raw === '') return fallback;
  if (!/^[A-Za-z0-9._-]+$/.test(raw) || raw.length > maxLength) {
    throw new ConfigError(name, `may hold only letters, digits, ".", "_" and "-" (at most ${maxLength}), got "${raw}"`);
  }
  return raw;
}

function retention(env: Env, name: string, fallback: number): number {
  if (env[name]?.trim() === '-1') return -1;
  return integer(env, name, fallback, 60_000);
}

/** The base of every URL handed out: links are built by appending paths, so it holds no query, fragment or credentials. */
function baseUrl(env: Env, name: string, fallback: string): string {
  const raw = optional(env, name) ?? fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
    if (!['http:', 'https:'].includes(parsed.protocol)) throw new Error();
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
  // not echoed: the value holds a password
  if (parsed.username || parsed.password) throw new ConfigError(name, 'must not hold a user name or password');
  if (/[?#]/.test(raw)) throw new ConfigError(name, `must not hold a query (?…) or fragment (#…): every URL handed out appends a path to it, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

/**
 * MongoDB's connection string, checked as the driver reads it (scheme, user info, host list, then
 * path and options) so a typo names MONGODB_URL at start-up. Never echoed: it may hold a password.
 */
function mongodbUrlOf(env: Env, name: string): string | undefined {
  const raw = optional(env, name);
  if (raw === undefined) return undefined;
  const shape = 'must be a MongoDB connection string: mongodb://[user:password@]host[:port][,host[:port]…][/database][?options] or mongodb+srv://[user:password@]host[/database][?options]';
  const match = /^(mongodb|mongodb\+srv):\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/?@]+)(.*)$/.exec(raw);
  if (!match) throw new ConfigError(name, shape);
  const [, scheme, user, password, hostList, rest] = match;
  const hosts = hostList.split(',');
  const srv = scheme === 'mongodb+srv';
  if (user === '' || (srv && hosts.length > 1) || hosts.some((host) => !validHostPort(host, { port: !srv, ipv6: true }))) throw new ConfigError(name, shape);
  try {
    decodeURIComponent(user ?? '');
    decodeURIComponent(password ?? '');
    if (rest !== '' && !/^[/?]/.test(rest)) throw new Error();
    new URL(`http://placeholder${rest}`);
  } catch {
    throw new ConfigError(name, shape);
  }
  return raw;
}

/**
 * EventStoreDB's connection string as @eventstore/db-client parses it: esdb:// (or esdb+discover://
 * for gossip), optional user:password@, host[:port] list, optional ?key=value&… settings. Never
 * echoed: it may hold a password.
 */
function eventStoreUrlOf(env: Env, name: string): string | undefined {
  const raw = optional(env, name);
  if (raw === undefined) return undefined;
  const match = /^esdb(?:\+discover)?:\/\/(?:[^:@/]+:[^@]+@)?([^/?@]+)\/?(?:\?[^=&?]+=[^&?]+(?:&[^=&?]+=[^&?]+)*)?$/.exec(raw);
  if (!match || !match[1].split(',').every((host) => validHostPort(host, { port: true, ipv6: false }))) {
    throw new ConfigError(name, 'must be an EventStoreDB connection string: esdb://[user:password@]host[:port][,host[:port]…][?key=value…] (or esdb+discover://…)');
  }
  return raw;
}

/** `host` or `host:port` (port 1–65535); `[IPv6]` literals where the driver takes them. */
function validHostPort(value: string, allow: { port: boolean; ipv6: boolean }): boolean {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~%-]+)(?::(\d{1,5}))?$/.exec(value.trim());
  if (!match || (match[1].startsWith('[') && !allow.ipv6)) return false;
  if (match[2] === undefined) return true;
  return allow.port && Number(match[2]) >= 1 && Number(match[2]) <= 65535;
}

/**
 * For the process that listens on PORT (the gateway): 0, any free port, is refused without a
 * PUBLIC_BASE_URL, as the links handed out would name port 0 (found by a review). Other
 * processes do not listen on PORT and take any value.
 */
export function assertPortNameable(env: Env = process.env): void {
  if (integer(env, 'PORT', 3000, 0, 65535) === 0 && optional(env, 'PUBLIC_BASE_URL') === undefined) {
    throw new ConfigError('PORT', 'of 0 (any free port) needs PUBLIC_BASE_URL: the callback, quote and PDF links would name port 0');
  }
}

export function loadConfig(env: Env = process.env): AppConfig {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const eventStoreUrl = eventStoreUrlOf(env, 'EVENTSTORE_URL');
  const mongodbUrl = mongodbUrlOf(env, 'MONGODB_URL');
  const kafkaBrokers = brokers(env, 'KAFKA_BROKERS');
  const embedded = !eventStoreUrl && !mongodbUrl && !kafkaBrokers;
  return {
    port,
    host: optional(env, 'HOST') ?? '127.0.0.1',
    publicBaseUrl: baseUrl(env, 'PUBLIC_BASE_URL', `http://localhost:${port}`),
    dataDir: resolve(optional(env, 'DATA_DIR') ?? './data'),
    adminToken: secret(env, 'ADMIN_TOKEN', 32),
    seedDemo: boolean(env, 'SEED_DEMO', embedded),
    eventStoreUrl,
    mongodbUrl,
    kafkaBrokers,
    kafkaClientId: kafkaName(env, 'KAFKA_CLIENT_ID', 'window-quoting', 200),
    // Kafka names are at most 249 characters; the prefix leaves room for the topic's own name.
    kafkaTopicPrefix: kafkaName(env, 'KAFKA_TOPIC_PREFIX', '', 200),
    kafkaTopicPartitions: integer(env, 'KAFKA_TOPIC_PARTITIONS', 6, 1, 10_000),
    kafkaReplicationFactor: integer(env, 'KAFKA_REPLICATION_FACTOR', 1, 1, 32_767),
    kafkaRetentionMs: retention(env, 'KAFKA_RETENTION_MS', 7 * 86_400_000),
    embeddedBusRetentionMs: retention(env, 'EMBEDDED_BUS_RETENTION_MS', 7 * 86_400_000),
    pricingTokenWindowMs: integer(env, 'PRICING_TOKEN_WINDOW_MS', 600_000, 1, MAX_PERIOD_MS),
    sessionIdleTtlMs: integer(env, 'SESSION_IDLE_TTL_MS', 86_400_000, 1, MAX_PERIOD_MS),
    webhookRetryScheduleMs: schedule(env, 'WEBHOOK_RETRY_SCHEDULE_MS', [0, 60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000]),
    pricingRetryScheduleMs: schedule(env, 'PRICING_RETRY_SCHEDULE_MS', [0, 1_000, 3_000]),
    webhookAllowPrivateNetworks: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    webhookAttemptTimeoutMs: integer(env, 'WEBHOOK_ATTEMPT_TIMEOUT_MS', 10_000, 1, 600_000),
    webhookDispatchConcurrency: integer(env, 'WEBHOOK_DISPATCH_CONCURRENCY', 64, 1, 10_000),
    // the interval of a setInterval
    quoteExpiryCheckMs: integer(env, 'QUOTE_EXPIRY_CHECK_MS', 60_000, 1, MAX_TIMER_MS),
    rateLimitIpPerMin: integer(env, 'RATE_LIMIT_IP_PER_MIN', 60),
    rateLimitKeyPerMin: integer(env, 'RATE_LIMIT_KEY_PER_MIN', 120),
    rateLimitCapabilityPerMin: integer(env, 'RATE_LIMIT_CAPABILITY_PER_MIN', 120),
    pricingTokenSecret: secret(env, 'PRICING_TOKEN_SECRET', 32),
    smtpUrl: smtpUrl(env, 'SMTP_URL'),
    mailFrom: mailbox(env, 'MAIL_FROM', 'Quotes <quotes@localhost>'),
    mailRetryScheduleMs: schedule(env, 'MAIL_RETRY_SCHEDULE_MS', [0, 60_000, 300_000, 900_000, 3_600_000, 21_600_000]),
    pdfRetryScheduleMs: schedule(env, 'PDF_RETRY_SCHEDULE_MS', [0, 10_000, 60_000, 300_000, 900_000]),
    fileLinkSecret: secret(env, 'FILE_LINK_SECRET', 32),
    quoteLinkSecret: secret(env, 'QUOTE_LINK_SECRET', 32),
    signingSecretKey: secret(env, 'SIGNING_SECRET_KEY', 32),
    signingSecretPreviousKeys: secrets(env, 'SIGNING_SECRET_PREVIOUS_KEYS', 32),
    fileLinkTtlMs: integer(env, 'FILE_LINK_TTL_MS', 300_000, 1, 3_600_000),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    readyMaxProjectionLag: integer(env, 'READY_MAX_PROJECTION_LAG', 1000),
    opsPort: optional(env, 'OPS_PORT') === undefined ? undefined : integer(env, 'OPS_PORT', 0, 1, 65535),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    shutdownNotReadyMs: integer(env, 'SHUTDOWN_NOT_READY_MS', 0, 0, 600_000),
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
  };
}

/** Injection token for AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');
