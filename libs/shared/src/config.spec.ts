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
      smtpUrl: undefined,
      mailFrom: 'Quotes <quotes@localhost>',
      fileLinkTtlMs: 300_000,
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

  it('reads the mail and file-link settings', () => {
    const config = loadConfig({ SMTP_URL: 'smtps://user:pw@mail.example.com:465', MAIL_FROM: 'Fenster GmbH <angebote@fenster.example>', MAIL_RETRY_SCHEDULE_MS: '0,50', FILE_LINK_TTL_MS: '1000' });
    expect(config).toMatchObject({ smtpUrl: 'smtps://user:pw@mail.example.com:465', mailFrom: 'Fenster GmbH <angebote@fenster.example>', mailRetryScheduleMs: [0, 50], fileLinkTtlMs: 1000 });
    expect(loadConfig({ MAIL_FROM: 'quotes@example.com' }).mailFrom).toBe('quotes@example.com');
  });

  it('never echoes an invalid SMTP_URL, which may hold a password', () => {
    expect(() => loadConfig({ SMTP_URL: 'http://user:secret@mail.example.com' })).toThrow(/^Invalid configuration: SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL$/);
  });

  it('turns the demo seed off by default once a real engine is configured', () => {
    expect(loadConfig({ MONGODB_URL: 'mongodb://localhost:27017/q' }).seedDemo).toBe(false);
    expect(loadConfig({ KAFKA_BROKERS: 'a:9092, b:9092' }).kafkaBrokers).toEqual(['a:9092', 'b:9092']);
  });

  it('configures Kafka topics with a modest single-broker default and reads every knob', () => {
    expect(loadConfig({ KAFKA_BROKERS: '127.0.0.1:19092' })).toMatchObject({
      kafkaBrokers: ['127.0.0.1:19092'],
      kafkaClientId: 'window-quoting',
      kafkaTopicPrefix: '',
      kafkaTopicPartitions: 6,
      kafkaReplicationFactor: 1,
      kafkaRetentionMs: 604_800_000,
    });
    expect(
      loadConfig({
        KAFKA_BROKERS: 'kafka-1.internal:9092,[::1]:9093',
        KAFKA_CLIENT_ID: 'quoting-eu',
        KAFKA_TOPIC_PREFIX: 'tenant-a.',
        KAFKA_TOPIC_PARTITIONS: '12',
        KAFKA_REPLICATION_FACTOR: '3',
        KAFKA_RETENTION_MS: '-1',
      }),
    ).toMatchObject({
      kafkaBrokers: ['kafka-1.internal:9092', '[::1]:9093'],
      kafkaClientId: 'quoting-eu',
      kafkaTopicPrefix: 'tenant-a.',
      kafkaTopicPartitions: 12,
      kafkaReplicationFactor: 3,
      kafkaRetentionMs: -1,
    });
  });

  it('keeps the embedded bus seven days by default, and forever with -1', () => {
    expect(loadConfig({}).embeddedBusRetentionMs).toBe(604_800_000);
    expect(loadConfig({ EMBEDDED_BUS_RETENTION_MS: '3600000' }).embeddedBusRetentionMs).toBe(3_600_000);
    expect(loadConfig({ EMBEDDED_BUS_RETENTION_MS: '-1' }).embeddedBusRetentionMs).toBe(-1);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['SEED_DEMO', 'maybe'],
    ['WEBHOOK_RETRY_SCHEDULE_MS', '0,1s'],
    ['PUBLIC_BASE_URL', 'ftp://example.com'],
    ['PRICING_TOKEN_SECRET', 'too-short'],
    ['RATE_LIMIT_KEY_PER_MIN', '-1'],
    ['SMTP_URL', 'mail.example.com:25'],
    ['MAIL_FROM', 'not an address'],
    ['MAIL_RETRY_SCHEDULE_MS', '0,1m'],
    ['PDF_RETRY_SCHEDULE_MS', 'soon'],
    ['FILE_LINK_SECRET', 'too-short'],
    ['QUOTE_LINK_SECRET', 'too-short'],
    ['FILE_LINK_TTL_MS', '0'],
    ['KAFKA_BROKERS', 'localhost'],
    ['KAFKA_BROKERS', 'kafka-1:9092,kafka-2'],
    ['KAFKA_BROKERS', 'kafka:99999'],
    ['KAFKA_BROKERS', ','],
    ['KAFKA_CLIENT_ID', 'quoting service'],
    ['KAFKA_TOPIC_PREFIX', 'tenant/a.'],
    ['KAFKA_TOPIC_PARTITIONS', '0'],
    ['KAFKA_REPLICATION_FACTOR', 'three'],
    ['KAFKA_RETENTION_MS', '7d'],
    ['KAFKA_RETENTION_MS', '1000'],
    ['EMBEDDED_BUS_RETENTION_MS', '1w'],
    ['EMBEDDED_BUS_RETENTION_MS', '59999'],
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
