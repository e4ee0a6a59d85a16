/**
 * Status lists by address and key: a page of credentials from one issuer shares one list, so each
 * list is fetched once per lifetime, and checks that arrive while it is being fetched wait for
 * that same fetch. Bounded in entries and in bytes; the oldest entry goes first.
 */

export interface Loaded<T> {
  value: T;
  /** How long the value may be reused; 0 or less: not at all. */
  lifetimeMs: number;
  /** What keeping it costs, in bytes. */
  size: number;
}

export interface StatusCache<T> {
  get(key: string, load: () => Promise<Loaded<T>>): Promise<T>;
}

export interface StatusCacheOptions {
  now: () => number;
  maxEntries: number;
  maxBytes: number;
}

export function createStatusCache<T>(options: StatusCacheOptions): StatusCache<T> {
  const entries = new Map<string, { value: T; expiresAt: number; size: number }>();
  const inFlight = new Map<string, Promise<T>>();
  let bytes = 0;

  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    bytes -= entry.size;
    entries.delete(key);
  };

  const keep = (key: string, loaded: Loaded<T>) => {
    remove(key);
    if (loaded.lifetimeMs <= 0 || loaded.size > options.maxBytes) return;
    entries.set(key, {
      value: loaded.value,
      expiresAt: options.now() + loaded.lifetimeMs,
      size: loaded.size,
    });
    bytes += loaded.size;
    while (entries.size > options.maxEntries || bytes > options.maxBytes) {
      remove(entries.keys().next().value!);
    }
  };

  return {
    get(key, load) {
      const entry = entries.get(key);
      if (entry && entry.expiresAt > options.now()) return Promise.resolve(entry.value);
      const pending = inFlight.get(key);
      if (pending) return pending;
      const loading = load()
        .then((loaded) => {
          keep(key, loaded);
          return loaded.value;
        })
        .finally(() => inFlight.delete(key));
      inFlight.set(key, loading);
      return loading;
    },
  };
}
