import type { EventStore, RecordedEvent } from '@lib/event-store';
import type { Checkpoint, GuardedUpsert, ReadStore } from '@lib/read-store';
import { engineOf, liveGeneration, pointerId, pointerTo, PROJECTION_POINTERS, readPointers } from './active-projections';
import { atGeneration, checkpointName, collectionName, type Projection } from './projection';
import { ensureProjectionIndexes, matches, projectEvents, type ProjectionFailed, type UnstoredDocuments } from './projection-runner';

export interface RebuildProgress {
  /** global position the rebuild has applied up to */
  position: number;
  /** head of the log when it was last read */
  head: number;
  /** events applied by this run */
  events: number;
  /** where this run started (0 for a fresh rebuild, more when it resumed) */
  resumedFrom: number;
  phase: 'building' | 'switched';
}

export interface RebuildOptions {
  events: EventStore;
  /** the read store; the rebuild writes and drops physical collections, so it works on its engine */
  store: ReadStore;
  projections: Projection[];
  /** events read from the log per page: a whole number, at least 1 (default 2,000) */
  batchSize?: number;
  /**
   * How long the rebuild keeps applying new events after the switch before it drops the old
   * generation: longer than readers and the projector take to notice the switch. 0 or more (default 2,000).
   */
  switchGraceMs?: number;
  onProgress?: (progress: RebuildProgress) => void;
  now?: () => number;
}

export interface RebuiltProjection {
  name: string;
  version: number;
  from: number;
  to: number;
}

export interface RebuildResult {
  projections: RebuiltProjection[];
  resumedFrom: number;
  position: number;
  events: number;
  /** physical collections dropped afterwards */
  dropped: string[];
}

/**
 * The physical collections of the projection's generations older than `below`, among `existing`:
 * never a newer one, which a rebuild started since is building.
 */
function generationsBelow(existing: string[], projection: Projection, below: number): string[] {
  return Object.keys(projection.collections).flatMap((collection) => {
    const base = collectionName({ version: projection.version }, collection).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const pattern = new RegExp(`^${base}(?:_g(\\d+))?$`);
    return existing.filter((name) => {
      const match = pattern.exec(name);
      return match !== null && Number(match[1] ?? 0) < below;
    });
  });
}

async function dropCollections(store: ReadStore, names: string[]): Promise<string[]> {
  for (const name of names) await store.dropCollection(name);
  return names;
}

interface Target {
  projection: Projection;
  checkpoint: string;
  /** position up to which the target's writes are made (stored, or being stored) */
  position: number;
  /** what the target wrote in the last page that concerned it, while that page may still be being stored */
  unstored?: UnstoredDocuments;
}

/** One page of the log as the targets made it: their writes, and their checkpoints to save with them. */
interface Page {
  writes: GuardedUpsert[];
  checkpoints: Checkpoint[];
  last: number;
  events: number;
  failure: ProjectionFailed | null;
}

async function ensureIndexes(store: ReadStore, targets: Target[]): Promise<void> {
  for (const { projection } of targets) await ensureProjectionIndexes(store, projection);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The page size and grace period, checked before anything is written: a page of no events reads
 * nothing, and would let the rebuild think it had caught up; a grace period that is not a number
 * of milliseconds would never end, or end at once.
 */
function checkedOptions(options: RebuildOptions): { batchSize: number; switchGraceMs: number } {
  const batchSize = options.batchSize ?? 2_000;
  const switchGraceMs = options.switchGraceMs ?? 2_000;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a whole number of events, at least 1; got ${batchSize}`);
  if (!Number.isFinite(switchGraceMs) || switchGraceMs < 0) throw new RangeError(`switchGraceMs must be a number of milliseconds, 0 or more; got ${switchGraceMs}`);
  return { batchSize, switchGraceMs };
}

/**
 * Blue/green rebuild. Each projection is built again from the start of the log into the next
 * generation of its collections (`<collection>_v<version>_g<n+1>`), beside the live one, with its
 * own checkpoint — so a killed rebuild continues where it stopped when run again. Once every
 * target has reached the head of the log, one write switches the pointers: readers move from the
 * old generation to the new one, never seeing a half-built one. The rebuild keeps applying new
 * events for a grace period (until readers and the projector follow the pointer), then drops the
 * old generation. Only projection handlers run: a rebuild has no side effects.
 *
 * The pages go to the store's bulk writer. Where it saves each page with its checkpoints in one
 * commit, the next page is projected while the writer stores the one before: the handlers then
 * read what that page wrote from memory, and nothing stored is ahead of them, as nothing else
 * writes the new generation before the switch.
 */
export async function rebuildProjections(options: RebuildOptions): Promise<RebuildResult> {
  const { batchSize, switchGraceMs } = checkedOptions(options);
  const store = engineOf(options.store);
  const { events } = options;
  const now = options.now ?? Date.now;
  const pointers = await readPointers(store);
  const live = options.projections.map((projection) => liveGeneration(projection, pointers));
  // Leftovers of a rebuild stopped after its switch, before its drop, or of one still in its grace
  // period: readers may use them until that switch's grace period is over.
  const existing = await store.listCollections();
  const leftovers = live.flatMap((projection) => generationsBelow(existing, projection, projection.generation ?? 0));
  if (leftovers.length > 0) {
    const lastSwitch = Math.max(...live.map((projection) => pointers.get(pointerId(projection))?.switchedAt ?? 0));
    const graceLeft = lastSwitch + switchGraceMs - now();
    if (graceLeft > 0) await sleep(graceLeft);
  }
  const dropped = await dropCollections(store, leftovers);
  const targets: Target[] = [];
  for (const projection of live) {
    const target = atGeneration(projection, (projection.generation ?? 0) + 1);
    const checkpoint = checkpointName(target);
    targets.push({ projection: target, checkpoint, position: (await store.getCheckpoint(checkpoint)) ?? 0 });
  }
  const resumedFrom = Math.min(...targets.map((target) => target.position));
  let position = resumedFrom;
  let read = resumedFrom;
  let applied = 0;
  let head = await events.headPosition();
  let switchedAt: number | null = null;
  const report = () => options.onProgress?.({ position, head, events: applied, resumedFrom, phase: switchedAt === null ? 'building' : 'switched' });
  report();

  const project = async (batch: RecordedEvent[], pipelined: boolean): Promise<Page> => {
    const last = batch[batch.length - 1].position;
    const page: Page = { writes: [], checkpoints: [], last, events: batch.length, failure: null };
    for (const target of targets) {
      const unseen = target.position >= last ? [] : batch.filter((event) => event.position > target.position);
      if (unseen.length === 0) continue;
      if (unseen.some((event) => matches(target.projection.filter, event))) {
        const projected = await projectEvents(store, target.projection, unseen, pipelined ? (target.unstored ?? new Map()) : undefined);
        page.writes.push(...projected.writes);
        target.unstored = projected.documents;
        if (projected.failure) {
          if (projected.appliedUpTo > target.position) page.checkpoints.push({ name: target.checkpoint, position: projected.appliedUpTo });
          page.failure = projected.failure;
          return page;
        }
      }
      // Projections the page did not concern move too, so a resumed rebuild does not read it again.
      page.checkpoints.push({ name: target.checkpoint, position: last });
      target.position = last;
    }
    return page;
  };

  const writer = store.openBulkWriter();
  /** the page the writer is storing; never rejects: it settles with the error of its write or its progress report, if any */
  let storing: Promise<unknown> = Promise.resolve(null);
  const stored = async () => {
    const error = await storing;
    if (error) throw error;
  };
  try {
    // A writer that stores each page while the next is projected keeps the indexes up to date off
    // the projection's path. Otherwise they are built once over the finished collections: much
    // faster than keeping them up to date through a million writes on the same path. Nothing
    // reads the new generation before the switch either way.
    let indexed = writer.atomic;
    if (indexed) await ensureIndexes(store, targets);
    for (;;) {
      const batch = await events.readAll({ after: read, maxCount: batchSize });
      if (batch.length > 0) {
        // After the switch the projector writes the new generation too: each page is read from the store once the one before is in it.
        const pipelined = writer.atomic && switchedAt === null;
        if (!pipelined) await stored();
        const page = await project(batch, pipelined);
        await stored();
        storing = writer
          .write(page.writes, page.checkpoints)
          .then(() => {
            applied += page.events;
            position = page.last;
            if (position > head) head = position;
            report();
            return null;
          })
          .catch((error: unknown) => error);
        if (page.failure) {
          await stored();
          throw page.failure;
        }
        read = page.last;
        continue;
      }
      await stored();
      if (switchedAt === null) {
        if (!indexed) {
          await ensureIndexes(store, targets);
          indexed = true;
          // The log may have grown while the indexes were built: read it again before the switch.
          continue;
        }
        // An empty page short of the head it read would switch readers to an incomplete generation and drop the complete one.
        if (position < head) throw new Error(`the event log returned no events after position ${position}, below its head ${head}: the rebuild did not switch`);
        // Current: every target has applied the whole log. One write switches them all.
        await store.upsert(targets.map((target) => ({ collection: PROJECTION_POINTERS, document: pointerTo(target.projection, now()) })));
        switchedAt = now();
        head = position;
        report();
        continue;
      }
      if (now() - switchedAt >= switchGraceMs) break;
      await sleep(Math.min(100, switchGraceMs));
    }
  } finally {
    await storing;
    await writer.close();
  }

  const built = await store.listCollections();
  dropped.push(...(await dropCollections(store, targets.flatMap(({ projection }) => generationsBelow(built, projection, projection.generation ?? 0)))));
  // Their checkpoints go with them: nothing reads them any more (a row each per rebuild until 2026-11-27).
  await store.deleteCheckpoints(
    targets.flatMap(({ projection }) => Array.from({ length: projection.generation ?? 0 }, (_, generation) => checkpointName({ name: projection.name, version: projection.version, generation }))),
  );
  return {
    projections: targets.map((target, i) => ({
      name: target.projection.name,
      version: target.projection.version,
      from: live[i].generation ?? 0,
      to: target.projection.generation ?? 0,
    })),
    resumedFrom,
    position,
    events: applied,
    dropped,
  };
}
