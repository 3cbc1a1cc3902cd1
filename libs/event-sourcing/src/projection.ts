import type { EventFilter, RecordedEvent } from '@lib/event-store';
import type { IndexSpec, ReadDocument } from '@lib/read-store';

/** Field on every projected document: global position of the last event applied to it. */
export const POSITION_FIELD = '_pos';

export interface ProjectedDocument extends ReadDocument {
  [POSITION_FIELD]?: number;
}

/**
 * What a projection handler may do: read documents of its own collections (as of the events
 * already applied) and write documents. Writes are guarded by the event's global position, so
 * replaying an event that a document has already seen changes nothing.
 */
export interface ProjectionContext {
  get<T extends ReadDocument>(collection: string, id: string): Promise<T | null>;
  /** Writes the document as given (not copied: a handler must not change it afterwards, nor one it read). */
  put(collection: string, document: ReadDocument): void;
}

/**
 * A named, versioned read model. Its collections are stored as `<collection>_v<version>`, so a
 * new version can be built beside the live one. Handlers are pure with respect to the outside
 * world: no webhooks, no e-mail, nothing but documents.
 */
export interface Projection {
  name: string;
  version: number;
  /** logical collection names with their indexes (one per list filter + sort) */
  collections: Record<string, IndexSpec[]>;
  filter: EventFilter;
  handle(event: RecordedEvent, context: ProjectionContext): Promise<void>;
  /**
   * Which build of this version the collections belong to: 0 (absent) is the first build, named
   * `<collection>_v<version>`; a rebuild writes generation n + 1 as `<collection>_v<version>_g<n+1>`
   * beside the live one (see projection-rebuild.ts). Readers keep asking for the generation-0
   * names; the read store resolves them to the active generation (ActiveProjectionReadStore).
   */
  generation?: number;
}

export function collectionName(projection: Pick<Projection, 'version' | 'generation'>, collection: string): string {
  const base = `${collection}_v${projection.version}`;
  return projection.generation ? `${base}_g${projection.generation}` : base;
}

export function checkpointName(projection: Pick<Projection, 'name' | 'version' | 'generation'>): string {
  const base = `projection:${projection.name}:v${projection.version}`;
  return projection.generation ? `${base}:g${projection.generation}` : base;
}

/** The same projection writing to another generation of its collections, with its own checkpoint. */
export function atGeneration(projection: Projection, generation: number): Projection {
  return Object.create(projection, { generation: { value: generation, enumerable: true } }) as Projection;
}

/** The position of the event that last wrote a stored document (0 for one written without a guard). */
export const documentPosition = (document: ReadDocument): number => (document[POSITION_FIELD] as number | undefined) ?? 0;

/** Removes bookkeeping fields before a document leaves the read side. */
export function withoutBookkeeping<T extends ReadDocument>(document: T): T {
  const { [POSITION_FIELD]: _ignored, ...rest } = document as T & { [POSITION_FIELD]?: number };
  return rest as T;
}
