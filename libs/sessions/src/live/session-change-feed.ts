import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { EventStore, type Subscription } from '@lib/event-store';
import { SESSION_STREAM } from '../domain/session.events';

/** What changed the session: the event's type and when it was stored (Unix ms). */
export interface SessionChange {
  type: string;
  recordedAt: number;
}

type Listener = (position: number, change: SessionChange) => void;

/**
 * Tells live views which sessions changed. One subscription to the event store's live log (session
 * streams only) serves every watcher of this process, so an append made by any process — a partner's
 * adjustment in another gateway, the customer's own write — reaches the customer's stream. Started
 * with the first watcher, at the head of the log: watchers read the current state themselves.
 */
@Injectable()
export class SessionChangeFeed implements OnModuleDestroy {
  private readonly logger = new Logger('SessionChangeFeed');
  private readonly listeners = new Map<string, Set<Listener>>();
  private subscription: Promise<Subscription> | null = null;

  constructor(private readonly events: EventStore) {}

  /** Calls `onChange` with the log position (and type and time) of each new event of the session until the returned function is called. */
  async watch(sessionId: string, onChange: Listener): Promise<() => void> {
    await this.follow();
    const streamId = `${SESSION_STREAM}${sessionId}`;
    const listeners = this.listeners.get(streamId) ?? new Set<Listener>();
    listeners.add(onChange);
    this.listeners.set(streamId, listeners);
    return () => {
      listeners.delete(onChange);
      if (listeners.size === 0 && this.listeners.get(streamId) === listeners) this.listeners.delete(streamId);
    };
  }

  private follow(): Promise<Subscription> {
    this.subscription ??= this.events.headPosition().then((after) =>
      this.events.subscribeToAll({
        after,
        filter: { streamPrefixes: [SESSION_STREAM] },
        handler: async (event) => {
          for (const listener of this.listeners.get(event.streamId) ?? []) listener(event.position, { type: event.type, recordedAt: event.recordedAt });
        },
        onError: (error) => this.logger.error(`session change feed failed; resuming: ${String(error)}`),
      }),
    );
    this.subscription.catch(() => (this.subscription = null));
    return this.subscription;
  }

  async onModuleDestroy(): Promise<void> {
    const subscription = await this.subscription?.catch(() => null);
    this.subscription = null;
    await subscription?.stop();
  }
}
