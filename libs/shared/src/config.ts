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
  /** pino level of the JSON logs; `silent` turns them off */
  logLevel: LogLevel;
  /** /readyz fails while a projection is more than this many events behind the head of the log */
  readyMaxProjectionLag: number;
  /** standalone projector and outbox serve /healthz, /readyz and /metrics on this port when set */
  opsPort: number | undefined;
  /** how long a SIGTERM waits for in-flight requests and deliveries before closing anyway */
  shutdownTimeoutMs: number;
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

function schedule(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+$/.test(p))) {
    throw new ConfigError(name, `must be a comma-separated list of milliseconds, got "${raw}"`);
  }
  return parts.map(Number);
}

function secret(env: Env, name: string, minLength: number): string | undefined {
  const raw = optional(env, name);
  if (raw !== undefined && raw.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters`);
  return raw;
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

function url(env: Env, name: string, fallback: string): string {
  const raw = optional(env, name) ?? fallback;
  try {
    const parsed = new URL(raw);
    if (!['http:', 'https:'].includes(parsed.protocol)) throw new Error();
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

export function loadConfig(env: Env = process.env): AppConfig {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const eventStoreUrl = optional(env, 'EVENTSTORE_URL');
  const mongodbUrl = optional(env, 'MONGODB_URL');
  const kafka = optional(env, 'KAFKA_BROKERS');
  const embedded = !eventStoreUrl && !mongodbUrl && !kafka;
  return {
    port,
    host: optional(env, 'HOST') ?? '127.0.0.1',
    publicBaseUrl: url(env, 'PUBLIC_BASE_URL', `http://localhost:${port}`),
    dataDir: resolve(optional(env, 'DATA_DIR') ?? './data'),
    adminToken: optional(env, 'ADMIN_TOKEN'),
    seedDemo: boolean(env, 'SEED_DEMO', embedded),
    eventStoreUrl,
    mongodbUrl,
    kafkaBrokers: kafka?.split(',').map((b) => b.trim()).filter(Boolean),
    pricingTokenWindowMs: integer(env, 'PRICING_TOKEN_WINDOW_MS', 600_000, 1),
    sessionIdleTtlMs: integer(env, 'SESSION_IDLE_TTL_MS', 86_400_000, 1),
    webhookRetryScheduleMs: schedule(env, 'WEBHOOK_RETRY_SCHEDULE_MS', [0, 60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000]),
    pricingRetryScheduleMs: schedule(env, 'PRICING_RETRY_SCHEDULE_MS', [0, 1_000, 3_000]),
    webhookAllowPrivateNetworks: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    webhookAttemptTimeoutMs: integer(env, 'WEBHOOK_ATTEMPT_TIMEOUT_MS', 10_000, 1, 600_000),
    webhookDispatchConcurrency: integer(env, 'WEBHOOK_DISPATCH_CONCURRENCY', 64, 1, 10_000),
    quoteExpiryCheckMs: integer(env, 'QUOTE_EXPIRY_CHECK_MS', 60_000, 1),
    rateLimitIpPerMin: integer(env, 'RATE_LIMIT_IP_PER_MIN', 60),
    rateLimitKeyPerMin: integer(env, 'RATE_LIMIT_KEY_PER_MIN', 120),
    rateLimitCapabilityPerMin: integer(env, 'RATE_LIMIT_CAPABILITY_PER_MIN', 120),
    pricingTokenSecret: secret(env, 'PRICING_TOKEN_SECRET', 32),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    readyMaxProjectionLag: integer(env, 'READY_MAX_PROJECTION_LAG', 1000),
    opsPort: optional(env, 'OPS_PORT') === undefined ? undefined : integer(env, 'OPS_PORT', 0, 1, 65535),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
  };
}

/** Injection token for AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');
