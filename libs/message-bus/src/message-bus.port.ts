/**
 * The message bus port: durable topics, ordered per key, consumed by groups that commit offsets.
 * Adapters: SQLite log (embedded default), Kafka.
 */

export interface BusMessage {
  key: string;
  value: string;
  headers?: Record<string, string>;
}

export interface ConsumedMessage extends BusMessage {
  topic: string;
  partition: number;
  offset: string;
}

export interface ConsumeOptions {
  groupId: string;
  topics: string[];
  /**
   * Handles a batch; offsets are committed only after it resolves, so a crash re-delivers the
   * batch (at-least-once). Handlers must be idempotent.
   */
  handleBatch: (messages: ConsumedMessage[]) => Promise<void>;
  onError?: (error: unknown) => void;
}

export interface Consumer {
  stop(): Promise<void>;
}

export abstract class MessageBus {
  /** Resolves once the messages are durably accepted by the bus. */
  abstract publish(topic: string, messages: BusMessage[]): Promise<void>;
  abstract consume(options: ConsumeOptions): Promise<Consumer>;
  /** Resolves once the bus has answered a request made now; rejects with why it could not (readiness). */
  abstract probe(): Promise<void>;
  abstract close(): Promise<void>;
}
