import { Logger } from '@nestjs/common';
import {
  Admin,
  ConfigResourceTypes,
  Consumer as KafkaConsumer,
  EachBatchPayload,
  IHeaders,
  Kafka,
  KafkaMessage,
  logLevel,
  LogEntry,
  Message,
  Partitioners,
  Producer,
} from 'kafkajs';
import { BusMessage, ConsumedMessage, ConsumeOptions, Consumer, MessageBus } from './message-bus.port';
import { backoffDelay, Sleeper } from '@lib/shared';

export interface KafkaMessageBusOptions {
  /** `host:port` of one or more brokers. */
  brokers: string[];
  clientId?: string;
  /** Put in front of every topic and consumer group, so tenants and test runs can share a broker. */
  topicPrefix?: string;
  /** Partitions of the topics this bus creates: the most consumers of one group that can work at once. */
  partitions?: number;
  replicationFactor?: number;
  /** `retention.ms` of the topics this bus creates; -1 keeps messages forever. */
  retentionMs?: number;
  /** Topics to create while connecting; any other topic is created on first use. */
  topics?: string[];
  /** A consumer the broker has not heard from for this long is dropped from its group. */
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /** How long an idle fetch waits at the broker; a new message ends the wait at once. */
  maxWaitTimeMs?: number;
  /** Partitions one consumer hands to its handler side by side (each partition stays in order). */
  partitionsConsumedConcurrently?: number;
  /** First wait before a failed batch is handed over again; doubles up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  connectionTimeoutMs?: number;
}

interface Settings {
  prefix: string;
  partitions: number;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  maxWaitTimeMs: number;
  partitionsConsumedConcurrently: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
}

interface PendingPublish {
  topic: string;
  messages: BusMessage[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** One produce request: messages by topic, and the publishes whose last message it carries. */
interface ProduceRequest {
  topicMessages: Map<string, Message[]>;
  bytes: number;
  completes: PendingPublish[];
}

const logger = new Logger('KafkaMessageBus');

/** How long concurrent readiness probes share one metadata request. */
const PROBE_SHARE_MS = 1_000;

/**
 * `max.message.bytes` of the topics this bus creates. The API takes bodies up to 1 MiB, and the
 * event that carries one (about 1.05 MB of JSON) is already over the broker default of 1,048,588
 * bytes; a refused event would stop the outbox relay for good, so the limit leaves ample room.
 */
const TOPIC_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/**
 * The most one produce request carries. The broker checks `max.message.bytes` against the record
 * batch of each partition, and a request holds one batch per partition: kept under this budget,
 * a batch also fits the broker default, so a topic created before the limit above still takes a
 * page of many events. A single message over the budget goes alone.
 */
const REQUEST_BUDGET_BYTES = 900 * 1024;

/** What a record adds to its key, value and headers (lengths, deltas, attributes), generously rounded up. */
const RECORD_OVERHEAD_BYTES = 64;

/**
 * The message bus on Apache Kafka. A message's partition is chosen by its key (Kafka's murmur2
 * partitioner), so each key keeps its order; a consumer group splits the partitions among its
 * members and commits a partition's offset only after the handler has finished that partition's
 * batch. Publishing waits for every in-sync replica (`acks: -1`) through an idempotent producer.
 */
export class KafkaMessageBus extends MessageBus {
  private readonly consumers = new Set<KafkaBusConsumer>();
  private readonly topicsReady = new Map<string, Promise<void>>();
  private queue: PendingPublish[] = [];
  private sending = false;
  private closed = false;
  /** the last probe's metadata request, shared by the probes of the next PROBE_SHARE_MS */
  private probing: { sentAt: number; answer: Promise<void> } | null = null;

  private constructor(
    private readonly kafka: Kafka,
    private readonly admin: Admin,
    private readonly producer: Producer,
    private readonly settings: Settings,
    private readonly topicSettings: { replicationFactor: number; retentionMs: number },
  ) {
    super();
  }

  /** Connects the admin client and the producer and creates the configured topics. */
  static async connect(options: KafkaMessageBusOptions): Promise<KafkaMessageBus> {
    if (options.brokers.length === 0) throw new TypeError('KafkaMessageBus needs at least one broker');
    const partitions = options.partitions ?? 6;
    if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError('partitions must be a positive integer');
    const kafka = new Kafka({
      clientId: options.clientId ?? 'window-quoting',
      brokers: options.brokers,
      connectionTimeout: options.connectionTimeoutMs ?? 3_000,
      logLevel: logLevel.WARN,
      logCreator: () => logEntry,
    });
    const admin = kafka.admin();
    // One send at a time keeps the idempotent producer's order; concurrent publishes wait and go
    // out together in the next request (see `flush`).
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await admin.connect();
    try {
      await producer.connect();
    } catch (error) {
      await admin.disconnect();
      throw error;
    }
    const bus = new KafkaMessageBus(
      kafka,
      admin,
      producer,
      {
        prefix: options.topicPrefix ?? '',
        partitions,
        sessionTimeoutMs: options.sessionTimeoutMs ?? 10_000,
        heartbeatIntervalMs: options.heartbeatIntervalMs ?? 1_000,
        maxWaitTimeMs: options.maxWaitTimeMs ?? 250,
        partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? partitions,
        retryDelayMs: options.retryDelayMs ?? 200,
        maxRetryDelayMs: options.maxRetryDelayMs ?? 10_000,
      },
      { replicationFactor: options.replicationFactor ?? 1, retentionMs: options.retentionMs ?? 7 * 86_400_000 },
    );
    try {
      await Promise.all((options.topics ?? []).map((topic) => bus.ensureTopic(topic)));
    } catch (error) {
      await bus.close();
      throw error;
    }
    return bus;
  }

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    if (typeof topic !== 'string' || topic === '') throw new TypeError('topic must be a non-empty string');
    for (const message of messages) {
      if (typeof message.key !== 'string' || typeof message.value !== 'string') {
        throw new TypeError('a message needs a string key and a string value');
      }
    }
    if (messages.length === 0) return;
    if (this.closed) throw new Error('the message bus is closed');
    await this.ensureTopic(topic);
    return new Promise((resolve, reject) => {
      this.queue.push({ topic, messages, resolve, reject });
      void this.flush();
    });
  }

  async consume(options: ConsumeOptions): Promise<Consumer> {
    const { groupId } = options;
    if (typeof groupId !== 'string' || groupId === '') throw new TypeError('groupId must be a non-empty string');
    if (options.topics.length === 0) throw new TypeError('consume needs at least one topic');
    if (this.closed) throw new Error('the message bus is closed');
    const topics = [...new Set(options.topics)];
    await Promise.all(topics.map((topic) => this.ensureTopic(topic)));
    const { settings } = this;
    const kafkaConsumer = this.kafka.consumer({
      groupId: settings.prefix + groupId,
      sessionTimeout: settings.sessionTimeoutMs,
      heartbeatInterval: settings.heartbeatIntervalMs,
      maxWaitTimeInMs: settings.maxWaitTimeMs,
      allowAutoTopicCreation: false,
    });
    const consumer = new KafkaBusConsumer(options, settings, kafkaConsumer, () => this.consumers.delete(consumer));
    this.consumers.add(consumer);
    try {
      await kafkaConsumer.connect();
      // A group that has never committed starts from the oldest message still kept.
      await kafkaConsumer.subscribe({ topics: topics.map((topic) => settings.prefix + topic), fromBeginning: true });
      await consumer.run();
    } catch (error) {
      await consumer.stop();
      throw error;
    }
    return consumer;
  }

  /**
   * A metadata request to a broker (no topics named): answered only while one is reachable.
   * Probes within PROBE_SHARE_MS of one another share a request, answered or not; a later probe
   * sends its own, so a broker that stopped answering and came back counts as soon as it answers
   * again, not only once an earlier request has timed out.
   */
  probe(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the bus is closed'));
    const now = performance.now();
    if (this.probing === null || now - this.probing.sentAt >= PROBE_SHARE_MS) {
      const answer = this.admin.describeCluster().then(
        () => undefined,
        (error: unknown) => {
          // kafkajs reports a broker that did not answer as a failed destructuring of its missing reply.
          throw new Error(`no broker answered a metadata request (${error instanceof Error ? error.message : String(error)})`);
        },
      );
      // A shared probe nobody waits for any more must not be an unhandled rejection.
      answer.catch(() => undefined);
      this.probing = { sentAt: now, answer };
    }
    return this.probing.answer;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
    while (this.sending) await new Promise((resolve) => setTimeout(resolve, 5));
    await this.producer.disconnect();
    await this.admin.disconnect();
  }

  /**
   * Creates the topic once per bus. An existing topic is used as it is: adding partitions would
   * move keys to other partitions and break their order, so a different count is only reported.
   * A smaller `max.message.bytes` is reported too rather than raised: kafkajs has only the old
   * AlterConfigs request, which resets every setting it does not name (retention among them).
   */
  private ensureTopic(topic: string): Promise<void> {
    let ready = this.topicsReady.get(topic);
    if (!ready) {
      const name = this.settings.prefix + topic;
      ready = this.admin
        .createTopics({
          waitForLeaders: true,
          topics: [
            {
              topic: name,
              numPartitions: this.settings.partitions,
              replicationFactor: this.topicSettings.replicationFactor,
              configEntries: [
                { name: 'retention.ms', value: String(this.topicSettings.retentionMs) },
                { name: 'max.message.bytes', value: String(TOPIC_MAX_MESSAGE_BYTES) },
              ],
            },
          ],
        })
        .then(async (created) => {
          if (created) return;
          const { topics } = await this.admin.fetchTopicMetadata({ topics: [name] });
          const partitions = topics[0]?.partitions.length;
          if (partitions !== this.settings.partitions) {
            logger.warn(`topic ${name} exists with ${partitions} partitions, not the configured ${this.settings.partitions}; it is used as it is`);
          }
          await this.checkMessageLimit(name);
        });
      ready.catch(() => this.topicsReady.delete(topic));
      this.topicsReady.set(topic, ready);
    }
    return ready;
  }

  /** Warns when an existing topic refuses messages this bus would publish to a topic it created. */
  private async checkMessageLimit(name: string): Promise<void> {
    let limit: number;
    try {
      const { resources } = await this.admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: ConfigResourceTypes.TOPIC, name, configNames: ['max.message.bytes'] }],
      });
      limit = Number(resources[0]?.configEntries.find((entry) => entry.configName === 'max.message.bytes')?.configValue);
    } catch (error) {
      logger.warn(`could not read max.message.bytes of topic ${name} (${error instanceof Error ? error.message : String(error)}); a message over its limit will be refused`);
      return;
    }
    if (limit < TOPIC_MAX_MESSAGE_BYTES) {
      logger.warn(
        `topic ${name} exists with max.message.bytes=${limit}, less than the ${TOPIC_MAX_MESSAGE_BYTES} this bus creates topics with: ` +
          `a publish holding a larger message fails every time it is tried; raise the topic's max.message.bytes to ${TOPIC_MAX_MESSAGE_BYTES}`,
      );
    }
  }

  /**
   * Sends what is queued, one request at a time. Publishes that arrive while a request is in
   * flight leave together in the next one: no linger on an idle bus, bigger requests under load.
   */
  private async flush(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      while (this.queue.length > 0) {
        const pending = this.queue;
        this.queue = [];
        await this.send(pending);
      }
    } finally {
      this.sending = false;
    }
  }

  /**
   * Sends the publishes in requests of at most REQUEST_BUDGET_BYTES, one after the other in
   * publish order, so each key keeps its order across requests. A publish resolves once the
   * request with its last message has been acknowledged. After a failed request the rest are not
   * sent (they would overtake the refused messages) and every publish not yet resolved fails; its
   * caller publishes it again, so a message may be stored twice, its first copy still in order.
   */
  private async send(pending: PendingPublish[]): Promise<void> {
    const requests = toRequests(pending);
    for (const [index, request] of requests.entries()) {
      try {
        await this.producer.sendBatch({
          acks: -1,
          topicMessages: [...request.topicMessages].map(([topic, messages]) => ({ topic: this.settings.prefix + topic, messages })),
        });
      } catch (error) {
        for (const { reject } of requests.slice(index).flatMap((unsent) => unsent.completes)) reject(error);
        return;
      }
      for (const { resolve } of request.completes) resolve();
    }
  }
}

/**
 * Packs the publishes' messages, in order, into requests under REQUEST_BUDGET_BYTES; a message
 * over the budget on its own fills one request.
 */
function toRequests(pending: PendingPublish[]): ProduceRequest[] {
  const requests: ProduceRequest[] = [];
  let current: ProduceRequest | null = null;
  for (const publish of pending) {
    for (const { key, value, headers } of publish.messages) {
      const bytes = sizeOf(key, value, headers);
      if (current === null || (current.bytes > 0 && current.bytes + bytes > REQUEST_BUDGET_BYTES)) {
        current = { topicMessages: new Map(), bytes: 0, completes: [] };
        requests.push(current);
      }
      const messages = current.topicMessages.get(publish.topic) ?? [];
      messages.push({ key, value, headers });
      current.topicMessages.set(publish.topic, messages);
      current.bytes += bytes;
    }
    current!.completes.push(publish);
  }
  return requests;
}

function sizeOf(key: string, value: string, headers: Record<string, string> | undefined): number {
  let bytes = RECORD_OVERHEAD_BYTES + Buffer.byteLength(key) + Buffer.byteLength(value);
  for (const [name, header] of Object.entries(headers ?? {})) bytes += Buffer.byteLength(name) + Buffer.byteLength(header);
  return bytes;
}

/**
 * Runs the handler on each partition's batch and commits that partition's offset after it. A
 * failed batch is handed over again, unchanged, after a backoff, while heartbeats keep the group
 * membership; a rebalance meanwhile gives the batch up uncommitted, for the partition's new owner.
 */
class KafkaBusConsumer implements Consumer {
  private stopped = false;
  private stopping: Promise<void> | null = null;
  private readonly backoff = new Sleeper();

  constructor(
    private readonly options: ConsumeOptions,
    private readonly settings: Settings,
    private readonly consumer: KafkaConsumer,
    private readonly onStopped: () => void,
  ) {
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      this.report(payload.error);
    });
  }

  run(): Promise<void> {
    return this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.settings.partitionsConsumedConcurrently,
      eachBatch: (payload) => this.handle(payload),
    });
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      this.backoff.interrupt();
      try {
        // Waits for the batches in hand (and their commits), then leaves the group.
        await this.consumer.disconnect();
      } finally {
        this.onStopped();
      }
    })();
    return this.stopping;
  }

  private async handle({ batch, heartbeat, resolveOffset, commitOffsetsIfNecessary, isRunning, isStale }: EachBatchPayload): Promise<void> {
    if (batch.messages.length === 0) return;
    const prefix = this.settings.prefix;
    const topic = batch.topic.startsWith(prefix) ? batch.topic.slice(prefix.length) : batch.topic;
    const messages = batch.messages.map((message) => toConsumed(topic, batch.partition, message));
    let rebalance: unknown = null;
    // Keeps the membership alive through long handlers and backoffs.
    const beat = setInterval(() => {
      heartbeat().catch((error: unknown) => {
        if (isRebalance(error)) rebalance = error;
      });
    }, this.settings.heartbeatIntervalMs);
    try {
      for (let failures = 0; ; ) {
        if (this.stopped || !isRunning() || isStale()) return;
        if (rebalance) throw rebalance;
        try {
          await this.options.handleBatch(messages);
          break;
        } catch (error) {
          this.report(error);
          await this.backoff.sleep(backoffDelay(++failures, this.settings.retryDelayMs, this.settings.maxRetryDelayMs));
        }
      }
      const last = batch.messages[batch.messages.length - 1].offset;
      resolveOffset(last);
      await commitOffsetsIfNecessary({
        topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: (BigInt(last) + 1n).toString() }] }],
      });
    } finally {
      clearInterval(beat);
    }
  }

  private report(error: unknown): void {
    try {
      if (this.options.onError) this.options.onError(error);
      else logger.error(`consumer group ${this.options.groupId} failed`, error as Error);
    } catch {
      // A failing error callback must not end the consumer.
    }
  }
}

function toConsumed(topic: string, partition: number, message: KafkaMessage): ConsumedMessage {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key?.toString('utf8') ?? '',
    value: message.value?.toString('utf8') ?? '',
    headers: toHeaders(message.headers),
  };
}

function toHeaders(headers: IHeaders | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last !== undefined) result[name] = last.toString();
  }
  return result;
}

/** kafkajs reports a group rebalance as one of these errors; the consumer rejoins on its own. */
function isRebalance(error: unknown): boolean {
  const type = (error as { type?: string } | null)?.type;
  return type === 'REBALANCE_IN_PROGRESS' || type === 'NOT_COORDINATOR_FOR_GROUP' || type === 'ILLEGAL_GENERATION' || type === 'UNKNOWN_MEMBER_ID';
}

/**
 * kafkajs logs every error response it then retries (a rebalance, a coordinator still loading, a
 * topic that already exists) and every rejoin; those are routine, so they go to debug.
 */
function logEntry({ level, log }: LogEntry): void {
  const { message, ...extra } = log;
  const line = `${message} ${JSON.stringify(extra)}`;
  const routine = message.startsWith('Response ') || message.includes('re-joining');
  if (routine || level > logLevel.WARN) logger.debug(line);
  else if (level === logLevel.ERROR) logger.error(line);
  else logger.warn(line);
}
