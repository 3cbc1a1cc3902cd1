import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('applies the defaults of decisions §1', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      publicBaseUrl: 'http://localhost:3000',
      seedDemo: true,
      pricingTokenWindowMs: 600_000,
      sessionIdleTtlMs: 86_400_000,
      webhookRetryScheduleMs: [0, 60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000],
      pricingRetryScheduleMs: [0, 1_000, 3_000],
      webhookAllowPrivateNetworks: false,
      quoteExpiryCheckMs: 60_000,
      rateLimitIpPerMin: 60,
      rateLimitKeyPerMin: 120,
      rateLimitCapabilityPerMin: 120,
      logLevel: 'info',
      readyMaxProjectionLag: 1000,
      opsPort: undefined,
      shutdownTimeoutMs: 10_000,
    });
  });

  it('reads the observability settings', () => {
    const config = loadConfig({ LOG_LEVEL: 'Debug', READY_MAX_PROJECTION_LAG: '5', OPS_PORT: '9000', SHUTDOWN_TIMEOUT_MS: '2500' });
    expect(config).toMatchObject({ logLevel: 'debug', readyMaxProjectionLag: 5, opsPort: 9000, shutdownTimeoutMs: 2500 });
    expect(loadConfig({ LOG_LEVEL: 'silent' }).logLevel).toBe('silent');
  });

  it('turns the demo seed off by default once a real engine is configured', () => {
    expect(loadConfig({ MONGODB_URL: 'mongodb://localhost:27017/q' }).seedDemo).toBe(false);
    expect(loadConfig({ KAFKA_BROKERS: 'a:9092, b:9092' }).kafkaBrokers).toEqual(['a:9092', 'b:9092']);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['SEED_DEMO', 'maybe'],
    ['WEBHOOK_RETRY_SCHEDULE_MS', '0,1s'],
    ['PUBLIC_BASE_URL', 'ftp://example.com'],
    ['PRICING_TOKEN_SECRET', 'too-short'],
    ['RATE_LIMIT_KEY_PER_MIN', '-1'],
    ['LOG_LEVEL', 'verbose'],
    ['READY_MAX_PROJECTION_LAG', 'many'],
    ['OPS_PORT', '0'],
    ['OPS_PORT', '65536'],
    ['SHUTDOWN_TIMEOUT_MS', '10s'],
  ])('refuses %s=%s with an error naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
