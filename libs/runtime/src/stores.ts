import { accessSync, constants, mkdirSync, statSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { ActiveProjectionReadStore } from '@lib/event-sourcing';
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import { SqliteMessageBus, type MessageBus } from '@lib/message-bus';
import { SqliteReadStore } from '@lib/read-store';
import { ConfigError, type AppConfig } from '@lib/shared';

/**
 * The stores the configuration names, opened the same way by the apps and the CLI. A real
 * engine's adapter, and the driver package behind it, is loaded only when its variable is set:
 * the three drivers take about 400 ms to load, which a CLI command on the embedded stores
 * should not pay.
 */

/** DATA_DIR as the product creates it: the product's user only. */
export const DATA_DIR_MODE = 0o700;

/** The file of each embedded store, in DATA_DIR (the idempotency keys: HttpInfrastructureModule). */
export const EMBEDDED_FILES = { eventStore: 'events.db', readStore: 'read-models.db', messageBus: 'bus.db', idempotency: 'idempotency.db' } as const;

/** The database files (names in DATA_DIR) of the stores this configuration keeps embedded. */
export function embeddedStoreFiles(config: Pick<AppConfig, 'eventStoreUrl' | 'mongodbUrl' | 'kafkaBrokers'>): string[] {
  return [
    ...(config.eventStoreUrl ? [] : [EMBEDDED_FILES.eventStore]),
    ...(config.mongodbUrl ? [] : [EMBEDDED_FILES.readStore]),
    ...(config.kafkaBrokers ? [] : [EMBEDDED_FILES.messageBus]),
    ...(config.mongodbUrl ? [] : [EMBEDDED_FILES.idempotency]),
  ];
}

/**
 * Refuses to start a service on embedded stores it could not write: SQLite opens a file it may
 * not write read-only without a word, and the connection stays so when the file is fixed, so
 * every write was 503 until a restart (found by a review, 2026-11-28: `chattr +i events.db`, or a
 * file of another user). DATA_DIR itself must take new files (each store's `-wal` and `-shm`).
 * Only the services check: the CLI's read commands work on a read-only copy.
 */
export function assertEmbeddedStoresWritable(config: Pick<AppConfig, 'dataDir' | 'eventStoreUrl' | 'mongodbUrl' | 'kafkaBrokers'>): void {
  const files = embeddedStoreFiles(config);
  if (files.length === 0) return;
  const paths = [config.dataDir, ...files.flatMap((file) => [file, `${file}-wal`, `${file}-shm`].map((name) => join(config.dataDir, name)))];
  for (const path of paths) {
    try {
      accessSync(path, constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue;
      throw new ConfigError('DATA_DIR', `(${config.dataDir}) cannot be written: ${path} is not writable by this process (${code}); check its owner, its mode and its attributes (lsattr)`);
    }
  }
}

/**
 * Creates DATA_DIR, if missing, readable by the product's user only: the embedded stores are
 * created with the umask (0644 by default) and hold every organization's data. An existing
 * directory is left as it is (docs/operations.md: `chmod 700` it).
 */
export function ensureDataDir(config: Pick<AppConfig, 'dataDir'>): string {
  const dataDir = config.dataDir;
  // Walked by hand, not mkdirSync's `recursive`: that loops forever (100 % CPU) under /proc.
  const missing: string[] = [];
  for (let path = dataDir; ; path = dirname(path)) {
    let entry: Stats | undefined;
    try {
      entry = statSync(path, { throwIfNoEntry: false });
    } catch (error) {
      // ENOTDIR: an ancestor is a file, named when the walk reaches it
      if ((error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw new ConfigError('DATA_DIR', `(${dataDir}) cannot be created: ${(error as Error).message}`);
    }
    if (entry?.isDirectory()) break;
    if (entry) throw new ConfigError('DATA_DIR', path === dataDir ? `(${dataDir}) is not a directory` : `(${dataDir}) cannot be created: ${path} is not a directory`);
    missing.unshift(path);
    if (dirname(path) === path) break;
  }
  for (const path of missing) {
    try {
      mkdirSync(path, { mode: DATA_DIR_MODE });
    } catch (error) {
      // another process (the projector beside the gateway) made it in the meantime
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(path).isDirectory()) continue;
      throw new ConfigError('DATA_DIR', `(${dataDir}) cannot be created: ${(error as Error).message}`);
    }
  }
  return dataDir;
}

/** The event store: EventStoreDB, or the embedded file. A malformed connection string stops start-up with a line naming the variable (decisions §1). */
export function openEventStore(config: AppConfig): EventStore {
  if (!config.eventStoreUrl) return new SqliteEventStore({ file: join(ensureDataDir(config), EMBEDDED_FILES.eventStore) });
  const { EventStoreDbEventStore } = require('@lib/event-store/eventstoredb-event-store') as typeof import('@lib/event-store/eventstoredb-event-store');
  try {
    return EventStoreDbEventStore.connect({ url: config.eventStoreUrl });
  } catch (error) {
    // the driver's message quotes the string, which may hold a password: only what it expected, and where
    const { expected, location } = error as { expected?: string; location?: [number, number] };
    const detail = expected && location ? `: expected ${expected} at position ${location[0]}` : '';
    throw new ConfigError('EVENTSTORE_URL', `is not an EventStoreDB connection string (esdb://…)${detail}`);
  }
}

/** The read store (MongoDB, or the embedded file), serving each projection's active generation (see ActiveProjectionReadStore). */
export async function openReadStore(config: AppConfig): Promise<ActiveProjectionReadStore> {
  // FULL: the relay's checkpoint and the webhook deliveries here must not outlive, after a power loss, what they guard in the bus file.
  if (!config.mongodbUrl) return new ActiveProjectionReadStore(new SqliteReadStore({ file: join(ensureDataDir(config), EMBEDDED_FILES.readStore), synchronous: 'FULL' }));
  const { MongoReadStore } = require('@lib/read-store/mongo-read-store') as typeof import('@lib/read-store/mongo-read-store');
  const url = config.mongodbUrl;
  try {
    return new ActiveProjectionReadStore(await MongoReadStore.connect({ url }));
  } catch (error) {
    // an option the driver refuses (the shape is checked by loadConfig); its message may quote the string, which may hold a password
    if (error instanceof Error && MONGODB_URL_ERRORS.includes(error.name)) throw new ConfigError('MONGODB_URL', `is refused by the MongoDB driver: ${error.message.split(url).join('…')}`);
    throw error;
  }
}

/** The MongoDB driver's errors about the connection string itself, not about the server. */
const MONGODB_URL_ERRORS = ['MongoParseError', 'MongoAPIError', 'MongoInvalidArgumentError'];

/** The message bus: Kafka, or the embedded file. */
export async function openMessageBus(config: AppConfig): Promise<MessageBus> {
  // FULL: a published message must be on disk before the relay's checkpoint (in the read store) passes it.
  if (!config.kafkaBrokers) return new SqliteMessageBus({ file: join(ensureDataDir(config), EMBEDDED_FILES.messageBus), retentionMs: config.embeddedBusRetentionMs, synchronous: 'FULL' });
  const { KafkaMessageBus } = require('@lib/message-bus/kafka-message-bus') as typeof import('@lib/message-bus/kafka-message-bus');
  return KafkaMessageBus.connect({
    brokers: config.kafkaBrokers,
    clientId: config.kafkaClientId,
    topicPrefix: config.kafkaTopicPrefix,
    partitions: config.kafkaTopicPartitions,
    replicationFactor: config.kafkaReplicationFactor,
    retentionMs: config.kafkaRetentionMs,
  });
}
