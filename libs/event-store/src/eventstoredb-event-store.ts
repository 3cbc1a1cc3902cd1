import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import {
  ANY,
  AppendExpectedRevision,
  BACKWARDS,
  ClientAppendResult,
  ClientEventData,
  ClientSubscription,
  END,
  EventStoreDbClient,
  FORWARDS,
  Filter,
  NO_STREAM,
  Position,
  ReadPosition,
  ResolvedEvent,
  START,
  STREAM_EXISTS,
  conflictRevision,
  connectClient,
  eventTypeFilter,
  excludeSystemEvents,
  isStreamNotFound,
  streamNameFilter,
} from './eventstoredb-client';
import {
  AppendResult,
  EventData,
  EventFilter,
  EventStore,
  ExpectedRevision,
  ReadAllOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevisionError,
} from './event-store.port';
import { backoffDelay, Sleeper } from '@lib/shared';
import { handOver } from './hand-over';

export interface EventStoreDbEventStoreOptions {
  /** Source of event ids (EventStoreDB requires UUIDs); defaults to random UUIDs. */
  newId?: () => string;
  /** Events read per request while reading $all. */
  pageSize?: number;
  /** Most events a batch handler receives at once. */
  batchSize?: number;
  /** First wait before a failed handler is retried or a dropped subscription resubscribes; doubles up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
}

interface DeliverySettings {
  batchSize: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
}

const MAX_POSITION = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The event store on EventStoreDB. A port position is the event's commit position in the
 * server's transaction log, which for every event appended without an explicit transaction
 * equals its prepare position; the pair is rebuilt from the number to resume a read or a
 * subscription (docs/decisions/real-engines-eventstoredb.md).
 */
export class EventStoreDbEventStore extends EventStore {
  private readonly newId: () => string;
  private readonly pageSize: number;
  private readonly delivery: DeliverySettings;
  private readonly subscriptions = new Set<EventStoreDbSubscription>();

  constructor(
    private readonly client: EventStoreDbClient,
    options: EventStoreDbEventStoreOptions = {},
  ) {
    super();
    this.newId = options.newId ?? randomUUID;
    this.pageSize = options.pageSize ?? 500;
    this.delivery = {
      batchSize: options.batchSize ?? 500,
      retryDelayMs: options.retryDelayMs ?? 100,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 5_000,
    };
  }

  /** Connects lazily: the first request opens the connection, to the cluster leader unless `url` says otherwise. */
  static connect(options: { url: string } & EventStoreDbEventStoreOptions): EventStoreDbEventStore {
    return new EventStoreDbEventStore(connectClient(options.url), options);
  }

  async appendToStream(streamId: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult> {
    if (typeof streamId !== 'string' || streamId === '') throw new TypeError('streamId must be a non-empty string');
    for (const event of events) {
      if (typeof event.type !== 'string' || event.type === '') throw new TypeError('event type must be a non-empty string');
    }
    const expectedRevision = toClientRevision(expected);
    if (events.length === 0) return this.checkRevision(streamId, expected);
    let result: ClientAppendResult;
    try {
      result = await this.client.appendToStream(streamId, events.map((event) => this.toEventData(event)), { expectedRevision });
    } catch (error) {
      const actual = conflictRevision(error);
      if (actual === undefined) throw error;
      throw new WrongExpectedRevisionError(streamId, expected, actual === NO_STREAM ? 'no_stream' : toSafeNumber(actual, 'revision'));
    }
    // A client configured with throwOnAppendFailure=false reports a conflict instead of throwing it.
    if (!result.success) {
      throw new WrongExpectedRevisionError(streamId, expected, result.nextExpectedRevision < 0n ? 'no_stream' : toSafeNumber(result.nextExpectedRevision, 'revision'));
    }
    const nextRevision = toSafeNumber(result.nextExpectedRevision, 'revision');
    // The server reports the commit position of the append's last event.
    if (result.position) return { nextRevision, position: toSafeNumber(result.position.commit, 'position') };
    const last = await this.lastEvent(streamId);
    return { nextRevision, position: last?.position ?? 0 };
  }

  async readStream(streamId: string, options: { fromRevision?: number; maxCount?: number } = {}): Promise<RecordedEvent[]> {
    const fromRevision = options.fromRevision ?? 0;
    if (!Number.isSafeInteger(fromRevision) || fromRevision < 0) throw new RangeError(`fromRevision must be a non-negative integer, got ${fromRevision}`);
    if (options.maxCount === 0) return [];
    const events: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(streamId, { fromRevision: BigInt(fromRevision), maxCount: options.maxCount, direction: FORWARDS })) {
        events.push(toRecordedEvent(resolved));
      }
    } catch (error) {
      if (isStreamNotFound(error)) return [];
      throw error;
    }
    return events;
  }

  /**
   * The v6 client has no server-side filter for reads of $all (only for subscriptions), so a
   * filtered read pages through the log and keeps what matches.
   */
  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    const matches = eventMatcher(options.filter);
    const found: RecordedEvent[] = [];
    const after = fromPortPosition(options.after);
    let from: ReadPosition = after;
    let skip: Position | undefined = after === START ? undefined : after;
    while (found.length < options.maxCount) {
      let read = 0;
      let last: Position | undefined;
      for await (const resolved of this.client.readAll({ fromPosition: from, maxCount: this.pageSize, direction: FORWARDS })) {
        read += 1;
        const position = resolved.event?.position;
        if (!position) continue;
        last = position;
        // A read of $all includes the event at its starting position.
        if (skip && comparePositions(position, skip) <= 0) continue;
        if (!matches(resolved)) continue;
        found.push(toRecordedEvent(resolved));
        if (found.length === options.maxCount) break;
      }
      if (read < this.pageSize || !last) break;
      from = last;
      skip = last;
    }
    return found;
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    const subscription = new EventStoreDbSubscription(this.client, options, this.delivery);
    this.subscriptions.add(subscription);
    subscription.start(() => this.subscriptions.delete(subscription));
    return subscription;
  }

  /** The newest event that is not the server's own ($-prefixed type), read backwards from the end. */
  async headPosition(): Promise<number> {
    let from: ReadPosition = END;
    for (;;) {
      let read = 0;
      let last: Position | undefined;
      for await (const resolved of this.client.readAll({ fromPosition: from, maxCount: this.pageSize, direction: BACKWARDS })) {
        read += 1;
        const position = resolved.event?.position;
        if (!position) continue;
        if (last && comparePositions(position, last) >= 0) continue;
        last = position;
        if (!isSystemEvent(resolved)) return toPortPosition(position);
      }
      if (read < this.pageSize || !last) return 0;
      from = last;
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    await this.client.dispose();
  }

  /** An append of no events only checks the expectation, as the embedded store does. */
  private async checkRevision(streamId: string, expected: ExpectedRevision): Promise<AppendResult> {
    const last = await this.lastEvent(streamId);
    const actual = last ? last.revision : 'no_stream';
    const matches =
      expected === 'any' || (expected === 'no_stream' ? actual === 'no_stream' : expected === 'stream_exists' ? actual !== 'no_stream' : actual === expected);
    if (!matches) throw new WrongExpectedRevisionError(streamId, expected, actual);
    return { nextRevision: last?.revision ?? -1, position: last?.position ?? 0 };
  }

  private async lastEvent(streamId: string): Promise<RecordedEvent | undefined> {
    try {
      for await (const resolved of this.client.readStream(streamId, { fromRevision: END, maxCount: 1, direction: BACKWARDS })) {
        return toRecordedEvent(resolved);
      }
    } catch (error) {
      if (!isStreamNotFound(error)) throw error;
    }
    return undefined;
  }

  private toEventData(event: EventData): ClientEventData {
    return {
      id: this.newId(),
      contentType: 'application/json',
      type: event.type,
      data: (event.data ?? null) as ClientEventData['data'],
      metadata: (event.metadata ?? {}) as ClientEventData['metadata'],
    } as ClientEventData;
  }
}

/**
 * A catch-up subscription to $all with a server-side filter. Events arrive through a small
 * prefetch buffer; a batch handler gets what the buffer holds. When the subscription drops, it
 * reports the error and subscribes again after a backoff from the last completed position, so
 * nothing is skipped; anything at or before that position is never handed over twice.
 */
class EventStoreDbSubscription implements Subscription {
  private static readonly logger = new Logger('EventStoreDbEventStore');
  private current: number;
  private stopped = false;
  private readonly backoff = new Sleeper();
  private live: { subscription: ClientSubscription; buffer: Prefetch<ResolvedEvent> } | undefined;
  private done: Promise<void> = Promise.resolve();
  private readonly matches: (resolved: ResolvedEvent) => boolean;

  constructor(
    private readonly client: EventStoreDbClient,
    private readonly options: SubscribeOptions,
    private readonly settings: DeliverySettings,
  ) {
    this.current = options.after;
    this.matches = eventMatcher(options.filter);
  }

  get position(): number {
    return this.current;
  }

  start(onFinished: () => void): void {
    this.done = this.run().finally(onFinished);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.backoff.interrupt();
    await this.closeLive();
    await this.done;
  }

  private async run(): Promise<void> {
    let drops = 0;
    while (!this.stopped) {
      try {
        const subscription = this.client.subscribeToAll({ fromPosition: fromPortPosition(this.current), filter: serverFilter(this.options.filter) });
        this.live = { subscription, buffer: new Prefetch(subscription, this.settings.batchSize * 2) };
        for (;;) {
          const received = await this.live.buffer.take(this.settings.batchSize);
          if (this.stopped) return;
          if (!received) throw new Error('EventStoreDB ended the subscription');
          drops = 0;
          const events = received.filter(this.matches).map(toRecordedEvent).filter((event) => event.position > this.current);
          if (!(await this.deliverAll(events))) return;
        }
      } catch (error) {
        if (this.stopped) return;
        this.report(error);
        await this.closeLive();
        if (this.stopped) return;
        await this.backoff.sleep(backoffDelay(++drops, this.settings.retryDelayMs, this.settings.maxRetryDelayMs));
      }
    }
  }

  private async deliverAll(events: RecordedEvent[]): Promise<boolean> {
    if (events.length === 0) return true;
    if (this.options.handleBatch) return this.deliver(events);
    for (const event of events) {
      if (!(await this.deliver([event]))) return false;
    }
    return true;
  }

  /** Hands the events to the handler until it succeeds; false when stopped first. */
  private async deliver(events: RecordedEvent[]): Promise<boolean> {
    if (!(await handOver(events, this.options, this.settings, this.backoff, () => this.stopped, (error) => this.report(error)))) return false;
    this.current = events[events.length - 1].position;
    return true;
  }

  private async closeLive(): Promise<void> {
    const live = this.live;
    this.live = undefined;
    if (!live) return;
    live.buffer.close();
    await live.subscription.unsubscribe().catch(() => undefined);
  }

  private report(error: unknown): void {
    try {
      if (this.options.onError) this.options.onError(error);
      else EventStoreDbSubscription.logger.error(`subscription failed at position ${this.current}; retrying`, error as Error);
    } catch {
      // A failing error callback must not end the subscription.
    }
  }
}

/**
 * Reads a subscription ahead of its handler, up to `capacity` events, so a batch handler gets
 * what has arrived and the server is not asked for more while the handler is far behind.
 */
class Prefetch<T> {
  private readonly items: T[] = [];
  private finished = false;
  private failure: { error: unknown } | undefined;
  private closed = false;
  private notify: (() => void) | undefined;
  private hasSpace: (() => void) | undefined;

  constructor(source: AsyncIterable<T>, private readonly capacity: number) {
    void this.pump(source);
  }

  /** The items buffered (at least one, at most `max`), waiting for one; undefined once the source has ended. */
  async take(max: number): Promise<T[] | undefined> {
    while (this.items.length === 0 && !this.finished && !this.closed) {
      await new Promise<void>((resolve) => (this.notify = resolve));
    }
    if (this.items.length > 0) {
      const taken = this.items.splice(0, max);
      this.wakePump();
      return taken;
    }
    if (this.failure) throw this.failure.error;
    return undefined;
  }

  close(): void {
    this.closed = true;
    this.wakeTaker();
    this.wakePump();
  }

  private async pump(source: AsyncIterable<T>): Promise<void> {
    try {
      for await (const item of source) {
        if (this.closed) break;
        this.items.push(item);
        this.wakeTaker();
        while (this.items.length >= this.capacity && !this.closed) await new Promise<void>((resolve) => (this.hasSpace = resolve));
        if (this.closed) break;
      }
    } catch (error) {
      this.failure = { error };
    } finally {
      this.finished = true;
      this.wakeTaker();
    }
  }

  private wakeTaker(): void {
    const notify = this.notify;
    this.notify = undefined;
    notify?.();
  }

  private wakePump(): void {
    const hasSpace = this.hasSpace;
    this.hasSpace = undefined;
    hasSpace?.();
  }
}

function toClientRevision(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'any':
      return ANY;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      if (!Number.isSafeInteger(expected) || expected < 0) throw new RangeError(`expected revision must be a non-negative integer, got ${String(expected)}`);
      return BigInt(expected);
  }
}

/**
 * The port position of an event. Events written in one append each have their own log record,
 * whose commit and prepare positions are equal; an event from an explicit transaction (legacy
 * TCP clients) has a shared commit position and cannot be told apart by one number.
 */
export function toPortPosition(position: Position): number {
  if (position.commit !== position.prepare) {
    throw new Error(`event at commit ${position.commit}/prepare ${position.prepare} was written in an explicit transaction, which this store does not support`);
  }
  return toSafeNumber(position.commit, 'position');
}

/** Where a read or subscription resumes after a port position: the same log record, or the start. */
export function fromPortPosition(position: number): Position | typeof START {
  if (!Number.isSafeInteger(position) || position < 0) throw new RangeError(`position must be a non-negative integer, got ${position}`);
  if (position === 0) return START;
  const at = BigInt(position);
  return { commit: at, prepare: at };
}

function toSafeNumber(value: bigint, what: string): number {
  if (value < 0n || value > MAX_POSITION) throw new RangeError(`${what} ${value} does not fit a safe integer`);
  return Number(value);
}

function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/**
 * The server filters on stream names or on event types, not both: stream prefixes go to the
 * server when given (they are the narrower), otherwise type prefixes; with neither, the server
 * leaves out its own events. `eventMatcher` checks the rest on arrival.
 */
export function serverFilter(filter: EventFilter | undefined): Filter {
  if (filter?.streamPrefixes?.length) return streamNameFilter({ prefixes: filter.streamPrefixes });
  if (filter?.eventTypePrefixes?.length) return eventTypeFilter({ prefixes: filter.eventTypePrefixes });
  return excludeSystemEvents();
}

function eventMatcher(filter: EventFilter | undefined): (resolved: ResolvedEvent) => boolean {
  const startsWithOne = (value: string, prefixes: string[] | undefined): boolean =>
    !prefixes?.length || prefixes.some((prefix) => value.startsWith(prefix));
  return (resolved) => {
    const event = resolved.event;
    return (
      event !== undefined &&
      !isSystemEvent(resolved) &&
      startsWithOne(event.streamId, filter?.streamPrefixes) &&
      startsWithOne(event.type, filter?.eventTypePrefixes)
    );
  };
}

/** The server's own events ($metadata, $statsCollection, links): never part of the domain's log. */
function isSystemEvent(resolved: ResolvedEvent): boolean {
  return !resolved.event || resolved.event.type.startsWith('$');
}

function toRecordedEvent(resolved: ResolvedEvent): RecordedEvent {
  const event = resolved.event;
  if (!event) throw new Error('EventStoreDB returned a link to a deleted event');
  if (!event.position) throw new Error('EventStoreDB did not report event positions; server 22.6 or later is required');
  const metadata = event.metadata;
  return {
    id: event.id,
    streamId: event.streamId,
    type: event.type,
    data: event.data,
    metadata: metadata && typeof metadata === 'object' && !(metadata instanceof Uint8Array) && !Array.isArray(metadata) ? metadata : {},
    revision: toSafeNumber(event.revision, 'revision'),
    position: toPortPosition(event.position),
    recordedAt: event.created.getTime(),
  };
}
