/**
 * A bounded map, least recently used out, for values that are a function of their key alone (a
 * decoded key, a certificate's fields): callers never see a stale entry, only a recomputed one.
 * `release` is called for an entry pushed out, for values that hold memory outside the heap.
 */
export interface Lru<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
}

export function createLru<K, V>(capacity: number, release?: (value: V) => void): Lru<K, V> {
  /** Insertion-ordered: the first entry is the least recently used. */
  const entries = new Map<K, V>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value !== undefined) {
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    set(key, value) {
      const replaced = entries.get(key);
      entries.delete(key);
      entries.set(key, value);
      if (replaced !== undefined && replaced !== value) release?.(replaced);
      if (entries.size <= capacity) return;
      const [oldestKey, oldest] = entries.entries().next().value!;
      entries.delete(oldestKey);
      release?.(oldest);
    },
  };
}
