/**
 * The file store port: immutable binary files (quote PDFs) under a key. Adapters: a directory
 * (embedded default, `DATA_DIR/pdfs`). Several machines need a shared store (GridFS when
 * MONGODB_URL is set) — see docs/decisions/quote-pdfs-and-email.md.
 */
export abstract class FileStore {
  /** Stores the bytes under the key, replacing what was there; readers never see a partial file. */
  abstract put(key: string, bytes: Buffer): Promise<void>;
  /** The bytes under the key, or null when there are none. */
  abstract get(key: string): Promise<Buffer | null>;
  abstract delete(key: string): Promise<void>;
}

/** Keys are relative paths of safe segments (`quotes/quo_1/v1-3.pdf`): no `..`, no absolute paths. */
const KEY = /^(?:[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}\/){0,7}[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

export function assertFileKey(key: string): void {
  if (!KEY.test(key) || key.split('/').some((segment) => segment.includes('..'))) throw new Error(`invalid file key "${key}"`);
}
