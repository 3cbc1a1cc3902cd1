/**
 * The event store port. Streams hold the events of one aggregate in order; the global log ($all)
 * orders every event of every stream. Adapters: SQLite (embedded default), EventStoreDB.
 */

/** An event as a decider produces it, before it is stored. */
export interface EventData<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
  metadata?: EventMetadata;
}

/** Who or what caused the event, and correlation for tracing. Never holds secrets. */
export interface EventMetadata {
  /** e.g. `apiKey:<keyId>`, `admin`, `customer:<sessionId>`, `system` */
  actor?: string;
  correlationId?: string;
  causationId?: string;
  [key: string]: unknown;
}

export interface RecordedEvent<Type extends string = string, Data = unknown> {
  /** unique id of this stored event */
  id: string;
  streamId: string;
  type: Type;
  data: Data;
  metadata: EventMetadata;
  /** 0-based position of the event inside its stream */
  revision: number;
  /** position in the global log; strictly increasing, 1-based, may have gaps */
  position: number;
  /** Unix ms when it was stored */
  recordedAt: number;
}

/**
 * `'no_stream'`: the stream must not exist; `'any'`: no check; `'stream_exists'`: it must exist;
 * a number: the revision of the stream's last event.
 */
export type ExpectedRevision = number | 'no_stream' | 'any' | 'stream_exists';

export interface AppendResult {
  /** revision of the last event appended */
  nextRevision: number;
  /** global position of the last event appended */
  position: number;
}

export interface ReadAllOptions {
  /** read events with position strictly greater than this; 0 reads from the start */
  after: number;
  maxCount: number;
  filter?: EventFilter;
}

/** A server-side filter: an event passes when its stream id starts with one of the prefixes. */
export interface EventFilter {
  streamPrefixes?: string[];
  eventTypePrefixes?: string[];
}

interface SubscribeSettings {
  /** deliver events with position strictly greater than this */
  after: number;
  filter?: EventFilter;
  /** called when the handler throws or the subscription drops; the subscription resumes */
  onError?: (error: unknown) => void;
}

/**
 * A subscription takes one of two handlers. `handler` sees one event at a time; `handleBatch` sees
 * the events of one read of the log, so it can write their effects together. A failing batch is
 * handed over again whole: a batch handler must be idempotent for the events it already handled.
 */
export type SubscribeOptions = SubscribeSettings &
  (
    | {
        /** called for each event in order; the next event waits for the promise */
        handler: (event: RecordedEvent) => Promise<void>;
        handleBatch?: never;
      }
    | {
        /** called with consecutive events in order, never an empty batch; the next batch waits for the promise */
        handleBatch: (events: RecordedEvent[]) => Promise<void>;
        handler?: never;
      }
  );

export interface Subscription {
  /** position of the last event (or last event of the batch) handed to the handler and completed */
  readonly position: number;
  stop(): Promise<void>;
}

export abstract class EventStore {
  abstract appendToStream(streamId: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult>;
  /** The stream's events from `fromRevision` (default 0); an empty array when the stream does not exist. */
  abstract readStream(streamId: string, options?: { fromRevision?: number; maxCount?: number }): Promise<RecordedEvent[]>;
  abstract readAll(options: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Catch-up subscription: reads history after `after`, then follows live appends. */
  abstract subscribeToAll(options: SubscribeOptions): Subscription;
  /** Position of the newest event in the global log, 0 when empty. */
  abstract headPosition(): Promise<number>;
  abstract close(): Promise<void>;
}

/** The stream's revision was not what the writer expected: someone else wrote first. */
export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}
