interface Entry<V> {
  value: V;
  /** read or written since the eviction sweep last passed it */
  used: boolean;
}

/**
 * A map of at most `capacity` entries that drops one not used recently when it is full (the
 * "second chance" approximation of least-recently-used): a read or write marks its entry used,
 * and past the capacity the oldest entry is dropped unless it is marked, in which case it loses
 * its mark and goes to the back.
 *
 * A hit only sets a flag. Moving the entry to the back of a Map on every hit (delete, then set)
 * made V8 allocate a new hash table for a map of one or two entries on each read, and for a map
 * that lives in the old generation it allocates those tables there: the gateway's API-key and
 * list-page caches filled the old generation by ~300 bytes per request (docs/benchmarks.md).
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, Entry<V>>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.value;
  }

  set(key: K, value: V): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      entry.value = value;
      entry.used = true;
      return;
    }
    this.entries.set(key, { value, used: false });
    if (this.entries.size > this.capacity) this.evictOne(key);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  keys(): IterableIterator<K> {
    return this.entries.keys();
  }

  /** Drops the oldest entry not marked used, giving each marked one on the way a second chance; never the one just added. */
  private evictOne(added: K): void {
    for (;;) {
      const [key, entry] = this.entries.entries().next().value as [K, Entry<V>];
      this.entries.delete(key);
      if (!entry.used && key !== added) return;
      entry.used = false;
      this.entries.set(key, entry);
    }
  }
}
