import { Logger } from '@nestjs/common';
import type { EventFilter, EventStore, RecordedEvent, Subscription } from '@lib/event-store';
import type { GuardedUpsert, ReadDocument, ReadStore } from '@lib/read-store';
import { collectionName, POSITION_FIELD, type Projection, type ProjectionContext } from './projection';
import { upcast } from './upcasting';

/** How soon the checkpoint follows events a projection skips (one write per burst, not per event). */
const SKIPPED_CHECKPOINT_DELAY_MS = 20;

export function checkpointName(projection: Pick<Projection, 'name' | 'version'>): string {
  return `projection:${projection.name}:v${projection.version}`;
}

/**
 * Applies one event to a projection. Documents are read through a small write-behind cache so a
 * handler sees its own earlier writes for the same event; writes carry the event position as a
 * guard, which is what makes replays idempotent.
 */
export async function applyEvent(
  store: ReadStore,
  projection: Projection,
  event: RecordedEvent,
  checkpoint?: { name: string; position: number },
): Promise<number> {
  const pending = new Map<string, ReadDocument>();
  const key = (collection: string, id: string) => `${collection}\u0000${id}`;
  const context: ProjectionContext = {
    async get<T extends ReadDocument>(collection: string, id: string) {
      const buffered = pending.get(key(collection, id));
      if (buffered) return buffered as T;
      const stored = await store.get<T>(collectionName(projection, collection), id);
      // A document that already reflects this event must not be derived from again.
      if (stored && ((stored[POSITION_FIELD] as number | undefined) ?? 0) >= event.position) return null;
      return stored;
    },
    put(collection: string, document: ReadDocument) {
      pending.set(key(collection, document.id), { ...document, [POSITION_FIELD]: event.position });
    },
  };
  await projection.handle(upcast(event), context);
  const writes: GuardedUpsert[] = [];
  for (const [k, document] of pending) {
    const collection = k.slice(0, k.indexOf('\u0000'));
    writes.push({
      collection: collectionName(projection, collection),
      document,
      guard: { field: POSITION_FIELD, value: event.position },
    });
  }
  if (writes.length === 0) {
    if (checkpoint) await store.saveCheckpoint(checkpoint.name, checkpoint.position);
    return 0;
  }
  return store.upsert(writes, checkpoint);
}

export function matches(filter: EventFilter | undefined, event: RecordedEvent): boolean {
  if (!filter) return true;
  if (filter.streamPrefixes && !filter.streamPrefixes.some((p) => event.streamId.startsWith(p))) return false;
  if (filter.eventTypePrefixes && !filter.eventTypePrefixes.some((p) => event.type.startsWith(p))) return false;
  return true;
}

export interface RunningProjection {
  readonly projection: Projection;
  readonly position: number;
  stop(): Promise<void>;
}

/**
 * Keeps one projection up to date: subscribes to the event store after its checkpoint, applies
 * each event, saves the checkpoint beside the data, and reports progress. A failing event is
 * logged and retried by the subscription; it never stops the projector.
 */
export async function startProjection(
  events: EventStore,
  store: ReadStore,
  projection: Projection,
  onProgress: (position: number) => void,
): Promise<RunningProjection> {
  const logger = new Logger(`Projection:${projection.name}`);
  for (const [collection, indexes] of Object.entries(projection.collections)) {
    await store.ensureIndexes(collectionName(projection, collection), indexes);
  }
  const name = checkpointName(projection);
  const start = (await store.getCheckpoint(name)) ?? 0;
  let position = start;
  let saved = start;
  onProgress(position);
  // Past events this projection ignores, the stored checkpoint is moved shortly afterwards in one
  // write: gateways in other processes read it to know the projection is current.
  let flushTimer: NodeJS.Timeout | null = null;
  const flush = async () => {
    flushTimer = null;
    if (position <= saved) return;
    const reached = position;
    await store.saveCheckpoint(name, reached);
    saved = Math.max(saved, reached);
  };
  // Unfiltered on purpose: progress must advance past events this projection ignores, or a
  // write waiting for read-your-writes on such an event would wait for nothing.
  const subscription: Subscription = events.subscribeToAll({
    after: start,
    handler: async (event) => {
      if (matches(projection.filter, event)) {
        await applyEvent(store, projection, event, { name, position: event.position });
        saved = event.position;
      } else if (!flushTimer) {
        flushTimer = setTimeout(() => void flush().catch((error) => logger.error(`could not save the checkpoint: ${String(error)}`)), SKIPPED_CHECKPOINT_DELAY_MS);
        flushTimer.unref?.();
      }
      position = event.position;
      onProgress(position);
    },
    onError: (error) => logger.error(`failed to apply an event; retrying: ${String(error)}`),
  });
  return {
    projection,
    get position() {
      return position;
    },
    stop: async () => {
      await subscription.stop();
      if (flushTimer) clearTimeout(flushTimer);
      await flush();
    },
  };
}
