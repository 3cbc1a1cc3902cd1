import { randomUUID } from 'node:crypto';
import { StreamNotFoundError, WrongExpectedVersionError } from '@eventstore/db-client';
import type {
  AllStreamResolvedEvent,
  AppendExpectedRevision,
  ClientAppendResult,
  ClientEventData,
  ClientSubscription,
  Direction,
  EventStoreDbClient,
  Filter,
  Position,
  ReadPosition,
  ReadRevision,
  ResolvedEvent,
} from '../eventstoredb-client';

type StoredEvent = NonNullable<AllStreamResolvedEvent['event']>;

export interface FakeEventStoreDbOptions {
  /** Log position of the first record; large by default so positions do not fit 32 bits. */
  firstPosition?: bigint;
  /** Report a conflict as `success: false` instead of throwing (`throwOnAppendFailure=false`). */
  throwOnAppendFailure?: boolean;
  /** Re-send the event at a subscription's starting position, as a careless server might. */
  inclusiveSubscriptions?: boolean;
}

/**
 * An in-memory EventStoreDB behind the adapter's client interface, behaving as the v6 client
 * does against a server: conflicts throw the library's WrongExpectedVersionError, reading a
 * missing stream throws StreamNotFoundError while iterating, each event has its own log record
 * (commit = prepare), reads of $all start at their position, subscriptions after theirs and
 * apply the server-side filter. Subscriptions can be dropped and subscribing can be made to fail.
 */
export class FakeEventStoreDb implements EventStoreDbClient {
  readonly log: StoredEvent[] = [];
  readonly appends: { streamName: string; events: ClientEventData[]; expectedRevision: AppendExpectedRevision }[] = [];
  readonly subscribeCalls: { fromPosition: ReadPosition; filter: Filter; at: number }[] = [];
  /** The next this many subscriptions fail with this error as soon as they are read. */
  failNextSubscriptions: { count: number; error: Error } = { count: 0, error: new Error('unavailable') };
  disposed = false;
  private nextPosition: bigint;
  private readonly live = new Set<FakeSubscription>();

  constructor(private readonly options: FakeEventStoreDbOptions = {}) {
    this.nextPosition = options.firstPosition ?? 2n ** 40n + 17n;
  }

  async appendToStream(streamName: string, events: ClientEventData[], options: { expectedRevision: AppendExpectedRevision }): Promise<ClientAppendResult> {
    this.appends.push({ streamName, events, expectedRevision: options.expectedRevision });
    const current = this.currentRevision(streamName);
    const expected = options.expectedRevision;
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' ? current === 'no_stream' : expected === 'stream_exists' ? current !== 'no_stream' : current === expected);
    if (!ok) {
      if (this.options.throwOnAppendFailure === false) {
        return { success: false, nextExpectedRevision: current === 'no_stream' ? -1n : current, position: undefined };
      }
      throw new WrongExpectedVersionError(undefined, { streamName, expected, current });
    }
    let revision = current === 'no_stream' ? -1n : current;
    for (const event of events) {
      revision += 1n;
      this.write(streamName, revision, event);
    }
    const last = this.log[this.log.length - 1].position;
    return { success: true, nextExpectedRevision: revision, position: { ...last } };
  }

  /** Writes one of the server's own events, as the server does between the domain's. */
  writeSystemEvent(streamName = `$$${randomUUID()}`, type = '$metadata'): void {
    const revision = this.currentRevision(streamName);
    this.write(streamName, revision === 'no_stream' ? 0n : revision + 1n, {
      id: randomUUID(),
      contentType: 'application/json',
      type,
      data: {},
      metadata: undefined,
    } as ClientEventData);
  }

  readStream(streamName: string, options: { fromRevision?: ReadRevision; maxCount?: number; direction?: Direction }): AsyncIterable<ResolvedEvent> {
    const snapshot = () => {
      const events = this.log.filter((event) => event.streamId === streamName);
      if (events.length === 0) throw new StreamNotFoundError(undefined, streamName);
      const from = options.fromRevision ?? (options.direction === 'backwards' ? 'end' : 'start');
      const ordered = options.direction === 'backwards' ? [...events].reverse() : events;
      const selected = ordered.filter((event) =>
        from === 'start' || from === 'end' ? true : options.direction === 'backwards' ? event.revision <= from : event.revision >= from,
      );
      return selected.slice(0, options.maxCount ?? Number.MAX_SAFE_INTEGER);
    };
    return iterate(snapshot);
  }

  readAll(options: { fromPosition: ReadPosition; maxCount: number; direction?: Direction }): AsyncIterable<AllStreamResolvedEvent> {
    const snapshot = () => {
      const { fromPosition } = options;
      if (options.direction === 'backwards') {
        const before = this.log.filter((event) => fromPosition === 'end' || fromPosition === 'start' || compare(event.position, fromPosition) < 0);
        return before.reverse().slice(0, options.maxCount);
      }
      const after = this.log.filter((event) => fromPosition === 'start' || (fromPosition !== 'end' && compare(event.position, fromPosition) >= 0));
      return after.slice(0, options.maxCount);
    };
    return iterate(snapshot);
  }

  subscribeToAll(options: { fromPosition: ReadPosition; filter: Filter }): ClientSubscription {
    this.subscribeCalls.push({ ...options, at: Date.now() });
    const failure = this.failNextSubscriptions.count > 0 ? this.failNextSubscriptions.error : undefined;
    if (failure) this.failNextSubscriptions.count -= 1;
    const subscription = new FakeSubscription(this.log, options, failure, this.options.inclusiveSubscriptions ?? false, () => this.live.delete(subscription));
    this.live.add(subscription);
    return subscription;
  }

  /** Breaks every open subscription, as a lost connection or a leader change does. */
  dropSubscriptions(error: Error): void {
    for (const subscription of this.live) subscription.drop(error);
  }

  get openSubscriptions(): number {
    return this.live.size;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }

  private currentRevision(streamName: string): bigint | 'no_stream' {
    let current: bigint | 'no_stream' = 'no_stream';
    for (const event of this.log) if (event.streamId === streamName) current = event.revision;
    return current;
  }

  private write(streamName: string, revision: bigint, event: ClientEventData): void {
    const at = this.nextPosition;
    const size = BigInt(JSON.stringify(event.data ?? null).length);
    this.nextPosition += 97n + size;
    this.log.push({
      streamId: streamName,
      id: event.id,
      isJson: true,
      revision,
      type: event.type,
      created: new Date(),
      // The client parses stored JSON, so what comes back is a copy.
      data: JSON.parse(JSON.stringify(event.data ?? null)),
      metadata: event.metadata === undefined ? undefined : JSON.parse(JSON.stringify(event.metadata)),
      position: { commit: at, prepare: at },
    } as StoredEvent);
    for (const subscription of this.live) subscription.wake();
  }
}

class FakeSubscription implements ClientSubscription {
  private ended = false;
  private failure: Error | undefined;
  private wakeUp: (() => void) | undefined;

  constructor(
    private readonly log: StoredEvent[],
    private readonly options: { fromPosition: ReadPosition; filter: Filter },
    failure: Error | undefined,
    private readonly inclusive: boolean,
    private readonly onEnd: () => void,
  ) {
    this.failure = failure;
  }

  wake(): void {
    const wakeUp = this.wakeUp;
    this.wakeUp = undefined;
    wakeUp?.();
  }

  drop(error: Error): void {
    this.failure = error;
    this.wake();
  }

  async unsubscribe(): Promise<void> {
    this.ended = true;
    this.wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<AllStreamResolvedEvent> {
    const { fromPosition } = this.options;
    let next = fromPosition === 'start' ? 0 : fromPosition === 'end' ? this.log.length : this.log.findIndex((event) => this.isAfterStart(event.position));
    if (next < 0) next = this.log.length;
    try {
      for (;;) {
        // The server sends what it has before it notices a dropped connection.
        await Promise.resolve();
        if (this.failure) throw this.failure;
        if (this.ended) return;
        if (next < this.log.length) {
          const event = this.log[next++];
          if (passes(this.options.filter, event)) yield { event };
          continue;
        }
        await new Promise<void>((resolve) => (this.wakeUp = resolve));
      }
    } finally {
      this.onEnd();
    }
  }

  private isAfterStart(position: Position): boolean {
    const start = this.options.fromPosition as Position;
    return this.inclusive ? compare(position, start) >= 0 : compare(position, start) > 0;
  }
}

function passes(filter: Filter, event: StoredEvent): boolean {
  const value = filter.filterOn === 'streamName' ? event.streamId : event.type;
  if ('prefixes' in filter) return filter.prefixes.some((prefix) => value.startsWith(prefix));
  return new RegExp(filter.regex).test(value);
}

function compare(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  return a.prepare === b.prepare ? 0 : a.prepare < b.prepare ? -1 : 1;
}

/** Like the client's streaming reads: nothing happens, and nothing is thrown, until iterated. */
function iterate<T extends StoredEvent>(snapshot: () => T[]): AsyncIterable<{ event: T }> {
  return {
    async *[Symbol.asyncIterator]() {
      await Promise.resolve();
      for (const event of snapshot()) yield { event };
    },
  };
}
