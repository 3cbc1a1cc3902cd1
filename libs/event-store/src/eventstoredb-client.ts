/**
 * The one file that knows `@eventstore/db-client`. The adapter sees the client only through
 * `EventStoreDbClient`, a narrow slice of the library's client, and the helpers below; a move to
 * `@kurrent/kurrentdb-client` (the same API under new names) changes this file alone.
 */
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  streamNameFilter,
} from '@eventstore/db-client';
import type {
  AllStreamResolvedEvent,
  AppendExpectedRevision,
  AppendResult as ClientAppendResult,
  Direction,
  EventData as ClientEventData,
  Filter,
  Position,
  ReadPosition,
  ReadRevision,
  ResolvedEvent,
} from '@eventstore/db-client';

export type { AllStreamResolvedEvent, AppendExpectedRevision, ClientAppendResult, ClientEventData, Direction, Filter, Position, ReadPosition, ReadRevision, ResolvedEvent };
export { ANY, BACKWARDS, END, FORWARDS, NO_STREAM, START, STREAM_EXISTS, eventTypeFilter, excludeSystemEvents, streamNameFilter };

/** A live catch-up subscription: its events in log order; ends or throws when it drops. */
export interface ClientSubscription extends AsyncIterable<AllStreamResolvedEvent> {
  unsubscribe(): Promise<void>;
}

/** What the adapter uses of the client. Reads throw as the library does: a missing stream on iteration. */
export interface EventStoreDbClient {
  appendToStream(streamName: string, events: ClientEventData[], options: { expectedRevision: AppendExpectedRevision }): Promise<ClientAppendResult>;
  readStream(streamName: string, options: { fromRevision?: ReadRevision; maxCount?: number; direction?: Direction }): AsyncIterable<ResolvedEvent>;
  readAll(options: { fromPosition: ReadPosition; maxCount: number; direction?: Direction }): AsyncIterable<AllStreamResolvedEvent>;
  subscribeToAll(options: { fromPosition: ReadPosition; filter: Filter }): ClientSubscription;
  dispose(): Promise<void>;
}

/** The stream's revision at the time of a refused append; `undefined` when `error` is not a conflict. */
export function conflictRevision(error: unknown): bigint | 'no_stream' | undefined {
  return error instanceof WrongExpectedVersionError ? error.actualVersion : undefined;
}

export function isStreamNotFound(error: unknown): boolean {
  return error instanceof StreamNotFoundError;
}

/**
 * A client for a connection string (`esdb://host:2113?tls=false`, `esdb+discover://…` for a
 * cluster). Writes must reach the leader, so the client prefers it unless the string chooses.
 */
export function connectClient(connectionString: string): EventStoreDbClient {
  return EventStoreDBClient.connectionString(withLeaderPreference(connectionString));
}

/** Adds `nodePreference=leader` unless the string sets a preference (the client reads keys case-insensitively). */
export function withLeaderPreference(connectionString: string): string {
  const trimmed = connectionString.trim().replace(/\/+$/, '');
  const query = trimmed.includes('?') ? trimmed.slice(trimmed.indexOf('?') + 1) : '';
  const keys = query.split('&').map((pair) => pair.split('=')[0].trim().toLowerCase().replace(/[_-]/g, ''));
  if (keys.includes('nodepreference')) return trimmed;
  return `${trimmed}${query ? '&' : trimmed.includes('?') ? '' : '?'}nodePreference=leader`;
}
