import type { FindResult } from './read-store.port';

interface Entry {
  token: string;
  result: FindResult<string>;
  bytes: number;
}

/**
 * Pages of `findJson` kept with the change token of their collection at the time of the read.
 * A page is answered again only while its collection's token is unchanged, i.e. nothing was
 * written to it since; any write makes every page of the collection miss. Bounded by bytes, the
 * least recently used page going first.
 */
export class JsonPageCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string, token: string): FindResult<string> | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    this.entries.delete(key);
    if (entry.token !== token) {
      this.bytes -= entry.bytes;
      return null;
    }
    this.entries.set(key, entry);
    return copyOf(entry.result);
  }

  set(key: string, token: string, result: FindResult<string>): void {
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.bytes -= previous.bytes;
    }
    let bytes = key.length;
    for (const item of result.items) bytes += item.length;
    if (bytes > this.maxBytes / 4) return;
    this.entries.set(key, { token, result: copyOf(result), bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }
}

/** Callers own what they get: the cached arrays are never handed out. */
function copyOf(result: FindResult<string>): FindResult<string> {
  return { items: result.items.slice(), nextAfter: result.nextAfter ? result.nextAfter.slice() : null };
}
