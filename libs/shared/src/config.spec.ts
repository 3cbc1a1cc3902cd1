import { assertPortNameable, ConfigError, listenFailure, loadConfig, MAX_TIMER_MS } from './config';

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
      shutdownNotReadyMs: 0,
      trustProxy: false,
    });
  });

  it.each([
    ['TRUE', true],
    ['false', false],
    ['1', 1],
    ['2', 2],
    ['10.0.0.1', '10.0.0.1'],
    ['10.0.0.0/8, 2001:db8::/32, loopback', '10.0.0.0/8,2001:db8::/32,loopback'],
  ])('reads TRUST_PROXY=%s as Fastify takes it: %j', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each(['on', 'yes', '0', '101', '10.0.0.1/33', '10.0.0', 'proxy.internal', '10.0.0.1,'])('refuses TRUST_PROXY=%s instead of ignoring it or trusting every hop', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/^Invalid configuration: TRUST_PROXY must be true, false, a number of proxy hops/);
  });

  it.each([
    ['WEBHOOK_RETRY_SCHEDULE_MS', '0,99999999999999999999999', /entry 2 is 99999999999999999999999/],
    ['PRICING_RETRY_SCHEDULE_MS', `0,${MAX_TIMER_MS + 1}`, /entry 2/],
    ['MAIL_RETRY_SCHEDULE_MS', `${MAX_TIMER_MS + 1}`, /entry 1/],
    ['PDF_RETRY_SCHEDULE_MS', `0,1,${MAX_TIMER_MS + 1}`, /entry 3/],
    ['PRICING_TOKEN_WINDOW_MS', '9007199254740991', /between 1 and 315360000000/],
    ['SESSION_IDLE_TTL_MS', '315360000001', /between 1 and 315360000000/],
  ])('refuses %s=%s, which would make timestamps no Unix ms can hold, with one line naming it', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} `));
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('takes the longest schedule delay and period it allows', () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: `0,${MAX_TIMER_MS}`, SESSION_IDLE_TTL_MS: '315360000000' })).toMatchObject({ webhookRetryScheduleMs: [0, MAX_TIMER_MS], sessionIdleTtlMs: 315_360_000_000 });
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

  it('reads the signing-secret keys a replaced key is kept in, without blank entries', () => {
    expect(loadConfig({}).signingSecretPreviousKeys).toEqual([]);
    const [a, b] = ['a'.repeat(32), 'b'.repeat(40)];
    expect(loadConfig({ SIGNING_SECRET_KEY: 'c'.repeat(32), SIGNING_SECRET_PREVIOUS_KEYS: ` ${a} ,${b},` })).toMatchObject({ signingSecretKey: 'c'.repeat(32), signingSecretPreviousKeys: [a, b] });
  });

  it('refuses a short key in SIGNING_SECRET_PREVIOUS_KEYS with one line naming the variable and the key, never echoing a key', () => {
    const value = `${'a'.repeat(40)},too-short-but-secret`;
    expect(() => loadConfig({ SIGNING_SECRET_PREVIOUS_KEYS: value })).toThrow(
      new ConfigError('SIGNING_SECRET_PREVIOUS_KEYS', 'must be a comma-separated list of keys of at least 32 characters each (key 2 is shorter)'),
    );
    expect(() => loadConfig({ SIGNING_SECRET_PREVIOUS_KEYS: value })).not.toThrow(/too-short-but-secret|aaaa/);
  });

  it('takes a QUOTE_EXPIRY_CHECK_MS up to the longest interval a timer holds, and refuses a longer one Node would run every 1 ms', () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
    expect(loadConfig({ QUOTE_EXPIRY_CHECK_MS: '2147483647' }).quoteExpiryCheckMs).toBe(MAX_TIMER_MS);
    for (const value of ['2147483648', '99999999999']) {
      expect(() => loadConfig({ QUOTE_EXPIRY_CHECK_MS: value })).toThrow(new ConfigError('QUOTE_EXPIRY_CHECK_MS', `must be between 1 and 2147483647, got ${value}`));
    }
  });

  it.each([
    'mongodb://localhost',
    'mongodb://user:p%40ss@127.0.0.1:27018/quotes_eu?retryWrites=false',
    'mongodb://a:1,b:2/e2e_1?w=majority',
    'mongodb://[::1]:27017/q',
    'mongodb://%2Fvar%2Fmongocryptd.sock',
    'mongodb+srv://user:pw@cluster.example/q?retryWrites=true',
  ])('reads MONGODB_URL=%s', (value) => {
    expect(loadConfig({ MONGODB_URL: value }).mongodbUrl).toBe(value);
  });

  it.each([
    'garbage',
    'http://localhost:27017',
    'mongodb://',
    'mongodb://user:secret@host:27x17/q',
    'mongodb://user:secret@host:99999/q',
    'mongodb://user:sec@ret@host/q',
    'mongodb://@host/q',
    'mongodb://host,/q',
    'mongodb://host#secret',
    'mongodb+srv://user:secret@host:27017/q',
    'mongodb+srv://user:secret@a.example,b.example/q',
  ])('refuses MONGODB_URL=%s with one line naming the variable, without echoing the value', (value) => {
    expect(() => loadConfig({ MONGODB_URL: value })).toThrow(
      /^Invalid configuration: MONGODB_URL must be a MongoDB connection string: mongodb:\/\/\[user:password@\]host\[:port\]\[,host\[:port\]…\]\[\/database\]\[\?options\] or mongodb\+srv:\/\/\[user:password@\]host\[\/database\]\[\?options\]$/,
    );
  });

  it.each([
    'esdb://localhost:2113?tls=false',
    'esdb://admin:changeit@a:2113,b:2113?nodePreference=follower&tls=false',
    'esdb://a:2113/?NodePreference=random',
    'esdb+discover://cluster.internal:2113',
    'esdb+discover://admin:pa/ss@cluster.internal?tls=true',
  ])('reads EVENTSTORE_URL=%s', (value) => {
    expect(loadConfig({ EVENTSTORE_URL: value }).eventStoreUrl).toBe(value);
  });

  it.each([
    'garbage',
    'esdb://',
    'http://admin:secret@localhost:2113',
    'esdb+gossip://admin:secret@localhost:2113',
    'esdb://admin:secret@localhost:2x13',
    'esdb://admin:secret@localhost:70000',
    'esdb://admin:secret@[::1]:2113',
    'esdb://admin:secret@localhost:2113?tls',
    'esdb://admin:secret@localhost:2113/db',
  ])('refuses EVENTSTORE_URL=%s with one line naming the variable, without echoing the value', (value) => {
    expect(() => loadConfig({ EVENTSTORE_URL: value })).toThrow(
      /^Invalid configuration: EVENTSTORE_URL must be an EventStoreDB connection string: esdb:\/\/\[user:password@\]host\[:port\]\[,host\[:port\]…\]\[\?key=value…\] \(or esdb\+discover:\/\/…\)$/,
    );
  });

  it('refuses PORT=0 (any free port) for the gateway without a PUBLIC_BASE_URL the links could name, and takes it with one; other processes take it', () => {
    expect(() => assertPortNameable({ PORT: '0' })).toThrow(new ConfigError('PORT', 'of 0 (any free port) needs PUBLIC_BASE_URL: the callback, quote and PDF links would name port 0'));
    expect(() => assertPortNameable({ PORT: '0', PUBLIC_BASE_URL: 'https://quotes.example.com' })).not.toThrow();
    expect(() => assertPortNameable({})).not.toThrow();
    expect(loadConfig({ PORT: '0' })).toMatchObject({ port: 0 });
  });

  it('takes a PUBLIC_BASE_URL with a path prefix, without its trailing slash', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://quotes.example.com/api-prefix/' }).publicBaseUrl).toBe('https://quotes.example.com/api-prefix');
  });

  it.each(['http://x.com/?a=b#f', 'http://x.com/?a=b', 'http://x.com#f', 'http://x.com/?'])('refuses PUBLIC_BASE_URL=%s: every URL built on it would be broken', (value) => {
    expect(() => loadConfig({ PUBLIC_BASE_URL: value })).toThrow(
      new ConfigError('PUBLIC_BASE_URL', `must not hold a query (?…) or fragment (#…): every URL handed out appends a path to it, got "${value}"`),
    );
  });

  it('refuses a PUBLIC_BASE_URL with a user name or password, without echoing it', () => {
    for (const value of ['https://admin:secret@x.com', 'https://admin@x.com']) {
      expect(() => loadConfig({ PUBLIC_BASE_URL: value })).toThrow(/^Invalid configuration: PUBLIC_BASE_URL must not hold a user name or password$/);
    }
  });

  it.each([
    ['ENOTFOUND', 'PORT', 'HOST'],
    ['EAI_AGAIN', 'PORT', 'HOST'],
    ['EADDRNOTAVAIL', 'OPS_PORT', 'HOST'],
    ['EADDRINUSE', 'PORT', 'PORT'],
    ['EACCES', 'OPS_PORT', 'OPS_PORT'],
  ] as const)('turns a listen error %s into one line naming %s', (code, portVariable, variable) => {
    const error = Object.assign(new Error(`listen ${code}: 10.0.0.1:80`), { code });
    expect(listenFailure(error, portVariable)).toEqual(new ConfigError(variable, `cannot be listened on (listen ${code}: 10.0.0.1:80)`));
  });

  it('leaves any other listen error as it is', () => {
    const error = Object.assign(new Error('boom'), { code: 'EMFILE' });
    expect(listenFailure(error, 'PORT')).toBe(error);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['SEED_DEMO', 'maybe'],
    ['WEBHOOK_RETRY_SCHEDULE_MS', '0,1s'],
    ['PUBLIC_BASE_URL', 'ftp://example.com'],
    ['PRICING_TOKEN_SECRET', 'too-short'],
    ['ADMIN_TOKEN', 'adm_too_short'],
    ['RATE_LIMIT_KEY_PER_MIN', '-1'],
    ['SMTP_URL', 'mail.example.com:25'],
    ['MAIL_FROM', 'not an address'],
    ['MAIL_RETRY_SCHEDULE_MS', '0,1m'],
    ['PDF_RETRY_SCHEDULE_MS', 'soon'],
    ['FILE_LINK_SECRET', 'too-short'],
    ['QUOTE_LINK_SECRET', 'too-short'],
    ['SIGNING_SECRET_KEY', 'too-short'],
    ['SIGNING_SECRET_PREVIOUS_KEYS', 'too-short'],
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
