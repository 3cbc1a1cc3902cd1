import { ReadStore, type FindOptions, type FindResult, type Filter, type GuardedUpsert, type IndexSpec, type ReadDocument } from '@lib/read-store';
import { atGeneration, checkpointName, collectionName, type Projection } from './projection';

/** The read store's own collection of active-generation pointers, one document per projection. */
export const PROJECTION_POINTERS = 'projection_pointers';

/**
 * Which generation of a projection's collections the read side serves. A rebuild switches it in
 * one write once the new generation has caught up; without a pointer, generation 0 is live.
 */
export interface ProjectionPointer extends ReadDocument {
  /** `<name>@v<version>`: each version has its own pointer, so gateways still running the code of
   * the previous version keep reading its live generation while the new version goes live */
  id: string;
  name: string;
  version: number;
  generation: number;
  /** logical collection names of the projection */
  collections: string[];
  switchedAt: number;
}

export async function readPointers(store: ReadStore): Promise<Map<string, ProjectionPointer>> {
  const { items } = await store.find<ProjectionPointer>(PROJECTION_POINTERS, { sort: [{ field: 'id', direction: 'asc' }], limit: 10_000 });
  return new Map(items.map((pointer) => [pointer.id, pointer]));
}

/** The projection as the read side serves it now: the active generation of its version (0 without a pointer). */
export const pointerId = (projection: Pick<Projection, 'name' | 'version'>) => `${projection.name}@v${projection.version}`;

export function liveGeneration(projection: Projection, pointers: Map<string, ProjectionPointer>): Projection {
  const pointer = pointers.get(pointerId(projection));
  return pointer && pointer.generation > 0 ? atGeneration(projection, pointer.generation) : projection;
}

export function pointerTo(projection: Projection, switchedAt: number): ProjectionPointer {
  return {
    id: pointerId(projection),
    name: projection.name,
    version: projection.version,
    generation: projection.generation ?? 0,
    collections: Object.keys(projection.collections),
    switchedAt,
  };
}

/** How long a read side trusts the pointers it read: the longest a gateway keeps reading a generation after a switch. */
export const POINTER_REFRESH_MS = 250;
/** How often a held switch is looked at again. */
const HOLD_RECHECK_MS = 20;
/** The longest reads stay on the generation before a switch: well within a rebuild's default grace period (2 s). */
export const MAX_HOLD_MS = 1_000;
/** How often a switch is decided again because writes were confirmed while it was being decided, before the last decision stands. */
const MAX_DECISIONS = 5;

/** A switch reads have not followed yet: its new generation, since when, and the writes confirmed when it was last looked at. */
interface Hold {
  name: string;
  generation: number;
  since: number;
  confirmed: number;
}

/**
 * The read store every process uses: readers keep naming the generation-0 collections
 * (`quotes_v2`), and this store serves whichever generation the projection's pointer names
 * (`quotes_v2_g3`). The pointers are re-read at most every `refreshMs`, so a switch reaches every
 * gateway within that time and a read costs one map lookup. Everything else goes to the engine.
 */
export class ActiveProjectionReadStore extends ReadStore {
  private names = new Map<string, string>();
  private pointers = new Map<string, ProjectionPointer>();
  /** the generation reads are served from, per pointer id: the pointer's, or the one before while a switch is held */
  private served = new Map<string, number>();
  /** switches held back until the new generation has every write confirmed so far, per pointer id */
  private readonly holds = new Map<string, Hold>();
  private loadedOnce = false;
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | null = null;
  /** The engine's change token of the pointers' collection, taken before the pointers in use were read. */
  private pointersToken: string | null = null;
  /** The last token given per physical collection, with the engine's token it was made from. */
  private readonly tokens = new Map<string, { engineToken: string; token: string }>();
  /** how far writes were confirmed to the clients of this process, per projection name (ReadYourWrites) */
  private confirmed: (projection: string) => number = () => 0;

  constructor(
    /** the adapter itself, named by physical collection names (what a rebuild writes and drops) */
    readonly engine: ReadStore,
    private readonly refreshMs = POINTER_REFRESH_MS,
  ) {
    super();
  }

  /**
   * Reads follow a switch only once the new generation has applied every write this process
   * confirmed (ReadYourWrites' progress): after a switch the projector runs the old generation
   * for up to a pointer refresh, and the writes it confirms there must not vanish from the next
   * read (found by a review, 2026-11-26).
   */
  followConfirmedWrites(confirmed: (projection: string) => number): void {
    this.confirmed = confirmed;
  }

  /** The pointers as of at most `refreshMs` ago: where the projections live, whether reads have followed yet or not. */
  async activePointers(): Promise<Map<string, ProjectionPointer>> {
    if (performance.now() - this.loadedAt >= this.refreshMs) await this.reload();
    return this.pointers;
  }

  /** The generation of the projection that reads are served from now (as last loaded). */
  servedGeneration(projection: Pick<Projection, 'name' | 'version'>): number {
    return this.served.get(pointerId(projection)) ?? 0;
  }

  private reload(): Promise<void> {
    // Taken before the read: a switch committed while the read runs makes it differ afterwards.
    const pointersToken = this.engine.changeToken(PROJECTION_POINTERS);
    this.loading ??= readPointers(this.engine)
      .then((pointers) => this.serve(pointers, pointersToken))
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }

  /**
   * Serves, per pointer, the pointer's generation, unless it has just moved and its new
   * generation is behind the writes confirmed for the projection (in this process: ReadYourWrites;
   * in any process: the old generation's checkpoint); then the generation served before, for at
   * most MAX_HOLD_MS (well within a rebuild's default grace period of 2 s, after which the old
   * generation is dropped) and while it still exists. Decided again when a write was confirmed
   * while it was being decided (its reads are awaited), so what is published, at once after the
   * last look, covers every write confirmed before (found by a review).
   */
  private async serve(pointers: Map<string, ProjectionPointer>, pointersToken: string | null): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const looked: Array<{ name: string; confirmed: number }> = [];
      const served = new Map<string, number>();
      for (const pointer of pointers.values()) {
        const before = this.loadedOnce ? (this.served.get(pointer.id) ?? 0) : pointer.generation;
        if (before === pointer.generation) {
          served.set(pointer.id, pointer.generation);
          continue;
        }
        const confirmed = this.confirmed(pointer.name);
        looked.push({ name: pointer.name, confirmed });
        served.set(pointer.id, (await this.newGenerationServable(pointer, before, confirmed)) ? pointer.generation : before);
      }
      if (attempt < MAX_DECISIONS && looked.some(({ name, confirmed }) => this.confirmed(name) > confirmed)) continue;
      // Published with the last look, no await in between: no write is confirmed meanwhile.
      this.publish(pointers, served, pointersToken);
      return;
    }
  }

  private publish(pointers: Map<string, ProjectionPointer>, served: Map<string, number>, pointersToken: string | null): void {
    const names = new Map<string, string>();
    for (const pointer of pointers.values()) {
      const generation = served.get(pointer.id)!;
      for (const collection of pointer.collections) {
        names.set(collectionName({ version: pointer.version }, collection), collectionName({ version: pointer.version, generation }, collection));
      }
      if (generation === pointer.generation) this.holds.delete(pointer.id);
      else {
        const hold = this.holds.get(pointer.id);
        const since = hold?.generation === pointer.generation ? hold.since : performance.now();
        this.holds.set(pointer.id, { name: pointer.name, generation: pointer.generation, since, confirmed: this.confirmed(pointer.name) });
      }
    }
    this.pointers = pointers;
    this.served = served;
    this.names = names;
    this.loadedOnce = true;
    // Tokens of generations no longer live (dropped after a rebuild) are not asked for again.
    const live = new Set(names.values());
    for (const physical of this.tokens.keys()) if (!live.has(physical)) this.tokens.delete(physical);
    // While a switch is held, the pointers are looked at again soon.
    this.loadedAt = performance.now() - (this.holds.size > 0 ? Math.max(0, this.refreshMs - HOLD_RECHECK_MS) : 0);
    this.pointersToken = pointersToken;
  }

  /** Whether reads may follow the pointer to its new generation now (see serve). */
  private async newGenerationServable(pointer: ProjectionPointer, before: number, confirmed: number): Promise<boolean> {
    const hold = this.holds.get(pointer.id);
    if (hold?.generation === pointer.generation && performance.now() - hold.since >= MAX_HOLD_MS) return true;
    const [reached, old] = await Promise.all([
      this.engine.getCheckpoint(checkpointName(pointer)),
      this.engine.getCheckpoint(checkpointName({ name: pointer.name, version: pointer.version, generation: before })),
    ]);
    if ((reached ?? 0) >= Math.max(confirmed, old ?? 0)) return true;
    return !(await this.stillStored(pointer, before));
  }

  /** Whether the generation served before a switch still exists: a rebuild with a short grace period may have dropped it already. */
  private async stillStored(pointer: ProjectionPointer, generation: number): Promise<boolean> {
    const [collection] = pointer.collections;
    return collection === undefined || (await this.engine.listCollections()).includes(collectionName({ version: pointer.version, generation }, collection));
  }

  /** Whether a write was confirmed since a held switch was last looked at: the new generation may have it now. */
  private confirmedSinceHeld(): boolean {
    for (const hold of this.holds.values()) if (this.confirmed(hold.name) > hold.confirmed) return true;
    return false;
  }

  private async resolve(collection: string): Promise<string> {
    if (performance.now() - this.loadedAt >= this.refreshMs || (this.holds.size > 0 && this.confirmedSinceHeld())) await this.reload();
    return this.names.get(collection) ?? collection;
  }

  async ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<void> {
    return this.engine.ensureIndexes(await this.resolve(collection), indexes);
  }

  async get<T extends ReadDocument>(collection: string, id: string): Promise<T | null> {
    return this.engine.get<T>(await this.resolve(collection), id);
  }

  async find<T extends ReadDocument>(collection: string, options: FindOptions): Promise<FindResult<T>> {
    return this.engine.find<T>(await this.resolve(collection), options);
  }

  async findJson(collection: string, field: string, options: FindOptions): Promise<FindResult<string>> {
    return this.engine.findJson(await this.resolve(collection), field, options);
  }

  async count(collection: string, filter?: Filter): Promise<number> {
    return this.engine.count(await this.resolve(collection), filter);
  }

  async upsert(writes: GuardedUpsert[], checkpoint?: { name: string; position: number }): Promise<number> {
    if (performance.now() - this.loadedAt >= this.refreshMs) await this.reload();
    const resolved = writes.map((write) => {
      const collection = this.names.get(write.collection);
      return collection ? { ...write, collection } : write;
    });
    return this.engine.upsert(resolved, checkpoint);
  }

  async delete(collection: string, id: string): Promise<void> {
    return this.engine.delete(await this.resolve(collection), id);
  }

  async dropCollection(collection: string): Promise<void> {
    return this.engine.dropCollection(await this.resolve(collection));
  }

  listCollections(): Promise<string[]> {
    return this.engine.listCollections();
  }

  getCheckpoint(name: string): Promise<number | null> {
    return this.engine.getCheckpoint(name);
  }

  saveCheckpoint(name: string, position: number): Promise<void> {
    return this.engine.saveCheckpoint(name, position);
  }

  saveCheckpoints(checkpoints: Array<{ name: string; position: number }>): Promise<void> {
    return this.engine.saveCheckpoints(checkpoints);
  }

  deleteCheckpoints(names: string[]): Promise<void> {
    return this.engine.deleteCheckpoints(names);
  }

  close(): Promise<void> {
    return this.engine.close();
  }

  /**
   * The live generation's token, tagged with its name, so a switch to another generation changes
   * it too. It is given while the pointers in use are known to be current: nothing was written to
   * their collection since they were read (its own change token is the same), or they were read
   * less than `refreshMs` ago, the delay every reader accepts for a switch. Otherwise none: the old
   * generation no longer receives writes after a switch, so its token alone would hide them; the
   * caller's read refreshes the pointers.
   */
  override changeToken(collection: string): string | null {
    if (performance.now() - this.loadedAt >= this.refreshMs && !this.pointersCurrent()) return null;
    // A held switch the confirmed writes may have made due: the caller's read looks again.
    if (this.holds.size > 0 && this.confirmedSinceHeld()) return null;
    const physical = this.names.get(collection) ?? collection;
    const token = this.engine.changeToken(physical);
    if (token === null) return null;
    // The same string while the engine's token is the same one: nothing allocated per request.
    let kept = this.tokens.get(physical);
    if (kept?.engineToken !== token) this.tokens.set(physical, (kept = { engineToken: token, token: `${physical}:${token}` }));
    return kept.token;
  }

  private pointersCurrent(): boolean {
    if (this.pointersToken === null) return false;
    return this.engine.changeToken(PROJECTION_POINTERS) === this.pointersToken;
  }
}

/** The physical store behind a read store (itself when it resolves no pointers). */
export function engineOf(store: ReadStore): ReadStore {
  return store instanceof ActiveProjectionReadStore ? store.engine : store;
}

/**
 * Whether the progress of this generation of the projection is what reads see: reads are served
 * from it, or from an older one (a switch held until this one has the confirmed writes). After a
 * switch, the projector's last moments on the old generation confirm nothing.
 */
export function readsSeeProgressOf(store: ReadStore, projection: Projection): boolean {
  return !(store instanceof ActiveProjectionReadStore) || (projection.generation ?? 0) >= store.servedGeneration(projection);
}

/** The live generation of each projection, as the given read store resolves it. */
export async function liveProjections(store: ReadStore, projections: Projection[]): Promise<Projection[]> {
  const pointers = store instanceof ActiveProjectionReadStore ? await store.activePointers() : await readPointers(store);
  return projections.map((projection) => liveGeneration(projection, pointers));
}
