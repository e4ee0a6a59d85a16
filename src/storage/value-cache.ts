/**
 * Decrypted block values, least recently used first out, bounded by the size of their blocks.
 * A block never changes (its CID is its hash), so an entry is never stale; it is only ever
 * filled after the block's hash and its envelope's authentication tag were checked. Callers get
 * copies, so what one request does with a value cannot change what the next one reads.
 */
export interface ValueCache {
  get(key: string): unknown | undefined;
  set(key: string, value: unknown, bytes: number): void;
  /** Drops every entry whose key starts with the prefix. */
  forget(prefix: string): void;
}

export function createValueCache(maxBytes: number): ValueCache {
  const entries = new Map<string, { value: unknown; bytes: number }>();
  let total = 0;
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      entries.delete(key);
      entries.set(key, entry);
      return structuredClone(entry.value);
    },
    forget(prefix) {
      for (const [key, entry] of entries) {
        if (!key.startsWith(prefix)) continue;
        entries.delete(key);
        total -= entry.bytes;
      }
    },
    set(key, value, bytes) {
      if (maxBytes <= 0 || bytes > maxBytes || entries.has(key)) return;
      entries.set(key, { value: structuredClone(value), bytes });
      total += bytes;
      for (const [oldest, entry] of entries) {
        if (total <= maxBytes) break;
        entries.delete(oldest);
        total -= entry.bytes;
      }
    },
  };
}
