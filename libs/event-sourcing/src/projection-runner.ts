import { Logger } from '@nestjs/common';
import type { EventFilter, EventStore, RecordedEvent, Subscription } from '@lib/event-store';
import type { GuardedUpsert, ReadDocument, ReadStore } from '@lib/read-store';
import { engineOf } from './active-projections';
import { checkpointName, collectionName, documentPosition, POSITION_FIELD, type Projection, type ProjectionContext } from './projection';
import { upcast } from './upcasting';

/** How soon the checkpoint follows events a projection skips (one write per burst, not per event). */
const SKIPPED_CHECKPOINT_DELAY_MS = 20;

/** A projection handler threw. The writes of the events before the failing one are committed; none after. */
export class ProjectionFailed extends Error {
  constructor(
    readonly projection: string,
    /** global position of the event the handler failed on */
    readonly position: number,
    /** position up to which the batch was applied and committed (0 when it failed on its first event) */
    readonly appliedUpTo: number,
    cause: unknown,
  ) {
    super(`projection ${projection} failed at position ${position}: ${String(cause)}`, { cause });
    this.name = 'ProjectionFailed';
  }
}


/** A document a batch wrote, and the position of the event that wrote it (the write's guard). */
interface WrittenDocument {
  collection: string;
  document: ReadDocument;
  position: number;
}

/**
 * The documents a batch of a projection wrote, by collection and id, as the next batch reads them
 * while the writer is still storing them (see projectEvents).
 */
export type UnstoredDocuments = ReadonlyMap<string, WrittenDocument>;

/**
 * The documents a projection reads and writes while it applies a batch of events: what it read
 * from the store, and its newest write of each document, which later events of the batch read
 * instead of the stored version.
 */
class BatchDocuments {
  private readonly stored = new Map<string, ReadDocument | null>();
  readonly written = new Map<string, WrittenDocument>();

  constructor(
    private readonly store: ReadStore,
    private readonly projection: Projection,
    private readonly unstored: UnstoredDocuments | undefined,
  ) {}

  /** The context one event's handler runs with; its writes count only once `keep()` is called. */
  forEvent(event: RecordedEvent): { context: ProjectionContext; keep: () => void } {
    const staged = new Map<string, WrittenDocument>();
    const context: ProjectionContext = {
      get: async <T extends ReadDocument>(collection: string, id: string): Promise<T | null> => {
        const key = `${collection}\u0000${id}`;
        const own = staged.get(key);
        if (own) return own.document as T;
        if (this.unstored) {
          // Only this batch and the one before wrote these collections since the checkpoint: their newest write is the document.
          const newest = this.written.get(key) ?? this.unstored.get(key);
          if (newest) return newest.document as T;
        }
        const stored = await this.load(collection, id, key);
        // A document that already reflects this event must not be derived from again.
        if (stored && documentPosition(stored) >= event.position) return null;
        const written = this.written.get(key);
        // A write from earlier in the batch counts unless the store is ahead of it (a replay).
        if (written && (!stored || written.position > documentPosition(stored))) return written.document as T;
        return stored as T | null;
      },
      put: (collection: string, document: ReadDocument) => {
        staged.set(`${collection}\u0000${document.id}`, { collection, document, position: event.position });
      },
    };
    return { context, keep: () => staged.forEach((write, key) => this.written.set(key, write)) };
  }

  /** The kept writes, each guarded by the position of the event that wrote it. */
  writes(): GuardedUpsert[] {
    return [...this.written.values()].map(({ collection, document, position }) => ({
      collection: collectionName(this.projection, collection),
      document,
      guard: { field: POSITION_FIELD, value: position },
    }));
  }

  private async load(collection: string, id: string, key: string): Promise<ReadDocument | null> {
    if (!this.stored.has(key)) this.stored.set(key, await this.store.get(collectionName(this.projection, collection), id));
    return this.stored.get(key)!;
  }
}

/** What a projection made of a batch of events: its writes, up to the event its handler failed on if one did. */
export interface ProjectedEvents {
  writes: GuardedUpsert[];
  /** the documents written, for the next batch to read while these are stored */
  documents: UnstoredDocuments;
  /** position of the last event applied (0 when none was) */
  appliedUpTo: number;
  failure: ProjectionFailed | null;
}

/**
 * Runs the projection's handlers over consecutive events of the log and returns the writes they
 * make, without storing them. Handlers read the store as of the events before the batch; with
 * `unstored`, the documents the previous batch wrote, which may not be stored yet, are read from
 * there instead (only when the writer that stores them saves each batch with its checkpoint, so
 * nothing stored is ahead of the events being applied).
 */
export async function projectEvents(store: ReadStore, projection: Projection, events: RecordedEvent[], unstored?: UnstoredDocuments): Promise<ProjectedEvents> {
  const documents = new BatchDocuments(store, projection, unstored);
  let previous = 0;
  for (const event of events) {
    if (matches(projection.filter, event)) {
      const { context, keep } = documents.forEvent(event);
      try {
        await projection.handle(upcast(event), context);
      } catch (error) {
        const failure = new ProjectionFailed(projection.name, event.position, previous, error);
        return { writes: documents.writes(), documents: documents.written, appliedUpTo: previous, failure };
      }
      keep();
    }
    previous = event.position;
  }
  return { writes: documents.writes(), documents: documents.written, appliedUpTo: previous, failure: null };
}

/**
 * Applies consecutive events of the log to a projection and commits their writes together, with
 * the checkpoint when one is named. Writes carry their event's position as a guard, which is what
 * makes replays idempotent. When a handler throws, the writes of the events before it are
 * committed (the checkpoint just before it) and ProjectionFailed is thrown. Returns how many
 * document writes applied.
 */
export async function applyEvents(store: ReadStore, projection: Projection, events: RecordedEvent[], checkpoint?: string): Promise<number> {
  // Nothing to write: the checkpoint moves with the next event this projection handles.
  if (!events.some((event) => matches(projection.filter, event))) return 0;
  const { writes, appliedUpTo, failure } = await projectEvents(store, projection, events);
  const at = checkpoint && appliedUpTo > 0 ? { name: checkpoint, position: appliedUpTo } : undefined;
  const applied = writes.length > 0 || at ? await store.upsert(writes, at) : 0;
  if (failure) throw failure;
  return applied;
}

/** Applies one event; see applyEvents. */
export function applyEvent(store: ReadStore, projection: Projection, event: RecordedEvent, checkpoint?: string): Promise<number> {
  return applyEvents(store, projection, [event], checkpoint);
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

export interface RunningProjections {
  stop(): Promise<void>;
}

/**
 * Moves the stored checkpoints of projections past events they skip, shortly afterwards and in
 * one write: gateways in other processes read the checkpoints to know the projections are
 * current. A projection that writes saves its checkpoint with its data instead.
 */
class SkippedCheckpoints {
  private readonly due = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: ReadStore,
    private readonly logger: Logger,
  ) {}

  /** The projection has passed `position` without anything to write. */
  passed(name: string, position: number): void {
    this.due.set(name, position);
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), SKIPPED_CHECKPOINT_DELAY_MS);
    this.timer.unref();
  }

  /** The projection's checkpoint needs no moving: it was saved with its writes, or the projection left. */
  settled(name: string): void {
    this.due.delete(name);
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.due.size === 0) return;
    const checkpoints = [...this.due].map(([name, position]) => ({ name, position }));
    this.due.clear();
    try {
      await this.store.saveCheckpoints(checkpoints);
    } catch (error) {
      this.logger.error(`could not save the checkpoints: ${String(error)}`);
    }
  }
}

/**
 * Applies the events a projection has not applied yet and records where it stands: its
 * checkpoint is committed with its writes, or, when none of the events concern it, moved a
 * little later with the others that skipped.
 */
async function catchUp(store: ReadStore, projection: Projection, events: RecordedEvent[], skipped: SkippedCheckpoints): Promise<void> {
  const name = checkpointName(projection);
  if (!events.some((event) => matches(projection.filter, event))) {
    skipped.passed(name, events[events.length - 1].position);
    return;
  }
  await applyEvents(store, projection, events, name);
  skipped.settled(name);
}

/** Creates the indexes of the projection's collections (of its generation), where missing. */
export async function ensureProjectionIndexes(store: ReadStore, projection: Projection): Promise<void> {
  for (const [collection, indexes] of Object.entries(projection.collections)) {
    await store.ensureIndexes(collectionName(projection, collection), indexes);
  }
}

/** Creates the projection's indexes and returns its checkpoint. */
async function prepare(store: ReadStore, projection: Projection): Promise<number> {
  await ensureProjectionIndexes(store, projection);
  return (await store.getCheckpoint(checkpointName(projection))) ?? 0;
}

/**
 * Keeps one projection up to date on its own subscription (a rebuild, or a projection that failed
 * in a group): applies each page of the log after its checkpoint, saves the checkpoint with the
 * data, and reports progress. A failing event is logged and retried; the events before it stay
 * applied, so the projection stalls exactly there, visibly.
 */
export async function startProjection(
  events: EventStore,
  store: ReadStore,
  projection: Projection,
  onProgress: (position: number) => void,
): Promise<RunningProjection> {
  // Its own generation's collections by their physical names, as in startProjections.
  store = engineOf(store);
  const logger = new Logger(`Projection:${projection.name}`);
  const skipped = new SkippedCheckpoints(store, logger);
  let position = await prepare(store, projection);
  onProgress(position);
  const advance = (to: number) => {
    position = to;
    onProgress(to);
  };
  // Unfiltered on purpose: progress must advance past events this projection ignores, or a
  // write waiting for read-your-writes on such an event would wait for nothing.
  const subscription: Subscription = events.subscribeToAll({
    after: position,
    handleBatch: async (batch) => {
      try {
        await catchUp(store, projection, batch.filter((event) => event.position > position), skipped);
      } catch (error) {
        if (error instanceof ProjectionFailed && error.appliedUpTo > position) advance(error.appliedUpTo);
        throw error;
      }
      advance(batch[batch.length - 1].position);
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
      await skipped.flush();
    },
  };
}

/**
 * Keeps a set of projections up to date from one subscription: each page of the log is read once
 * and handed to every projection in turn, which commits its writes for the page with its own
 * checkpoint. The group starts at the lowest checkpoint; a projection skips what it has already
 * applied. A projection whose handler fails leaves the group and continues on its own
 * subscription (see startProjection), so one failure stalls that projection alone.
 */
export async function startProjections(
  events: EventStore,
  store: ReadStore,
  projections: Projection[],
  onProgress: (projection: Projection, position: number) => void,
): Promise<RunningProjections> {
  // Each projection writes its own generation's collections, by their physical names. Through the
  // pointers (ActiveProjectionReadStore), a generation-0 projector still running after a rebuild's
  // switch would write the new generation from its own checkpoint, ahead of events the new
  // generation has not applied yet, which would then be skipped there for good.
  store = engineOf(store);
  const logger = new Logger('Projections');
  const skipped = new SkippedCheckpoints(store, logger);
  const members = await Promise.all(projections.map(async (projection) => ({ projection, position: await prepare(store, projection) })));
  for (const member of members) onProgress(member.projection, member.position);
  if (members.length === 0) return { stop: async () => undefined };
  const grouped = new Set(members);
  const alone: RunningProjection[] = [];

  const subscription = events.subscribeToAll({
    after: Math.min(...members.map((member) => member.position)),
    handleBatch: async (batch) => {
      const last = batch[batch.length - 1].position;
      for (const member of [...grouped]) {
        if (member.position >= last) continue;
        try {
          await catchUp(store, member.projection, batch.filter((event) => event.position > member.position), skipped);
        } catch (error) {
          logger.error(`${String(error)}; ${member.projection.name} continues on its own subscription, retrying`);
          alone.push(await startProjection(events, store, member.projection, (position) => onProgress(member.projection, position)));
          grouped.delete(member);
          skipped.settled(checkpointName(member.projection));
          continue;
        }
        member.position = last;
        onProgress(member.projection, last);
      }
    },
    onError: (error) => logger.error(`projections failed to read the log; retrying: ${String(error)}`),
  });
  return {
    stop: async () => {
      await subscription.stop();
      await Promise.all(alone.map((running) => running.stop()));
      await skipped.flush();
    },
  };
}
