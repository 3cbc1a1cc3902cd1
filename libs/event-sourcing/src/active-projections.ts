import { ReadStore, type FindOptions, type FindResult, type Filter, type GuardedUpsert, type IndexSpec, type ReadDocument } from '@lib/read-store';
import { atGeneration, collectionName, type Projection } from './projection';

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

/**
 * The read store every process uses: readers keep naming the generation-0 collections
 * (`quotes_v2`), and this store serves whichever generation the projection's pointer names
 * (`quotes_v2_g3`). The pointers are re-read at most every `refreshMs`, so a switch reaches every
 * gateway within that time and a read costs one map lookup. Everything else goes to the engine.
 */
export class ActiveProjectionReadStore extends ReadStore {
  private names = new Map<string, string>();
  private pointers = new Map<string, ProjectionPointer>();
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | null = null;
  /** The engine's change token of the pointers' collection, taken before the pointers in use were read. */
  private pointersToken: string | null = null;
  /** The last token given per physical collection, with the engine's token it was made from. */
  private readonly tokens = new Map<string, { engineToken: string; token: string }>();

  constructor(
    /** the adapter itself, named by physical collection names (what a rebuild writes and drops) */
    readonly engine: ReadStore,
    private readonly refreshMs = POINTER_REFRESH_MS,
  ) {
    super();
  }

  /** The pointers as of at most `refreshMs` ago. */
  async activePointers(): Promise<Map<string, ProjectionPointer>> {
    if (performance.now() - this.loadedAt >= this.refreshMs) await this.reload();
    return this.pointers;
  }

  private reload(): Promise<void> {
    // Taken before the read: a switch committed while the read runs makes it differ afterwards.
    const pointersToken = this.engine.changeToken(PROJECTION_POINTERS);
    this.loading ??= readPointers(this.engine)
      .then((pointers) => {
        const names = new Map<string, string>();
        for (const pointer of pointers.values()) {
          for (const collection of pointer.collections) {
            names.set(collectionName({ version: pointer.version }, collection), collectionName(pointer, collection));
          }
        }
        this.pointers = pointers;
        this.names = names;
        // Tokens of generations no longer live (dropped after a rebuild) are not asked for again.
        const live = new Set(names.values());
        for (const physical of this.tokens.keys()) if (!live.has(physical)) this.tokens.delete(physical);
        this.loadedAt = performance.now();
        this.pointersToken = pointersToken;
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }

  private async resolve(collection: string): Promise<string> {
    if (performance.now() - this.loadedAt >= this.refreshMs) await this.reload();
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

/** The live generation of each projection, as the given read store resolves it. */
export async function liveProjections(store: ReadStore, projections: Projection[]): Promise<Projection[]> {
  const pointers = store instanceof ActiveProjectionReadStore ? await store.activePointers() : await readPointers(store);
  return projections.map((projection) => liveGeneration(projection, pointers));
}
