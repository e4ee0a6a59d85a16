import { createHash } from 'node:crypto';
import { deriveKey } from './derive-key.ts';

/**
 * The master keys a process holds: it writes with the current one and reads with any of them, so
 * that `coffer master-key rotate` can move data from the previous keys to the current one while
 * the service runs (docs/operations.md, "Master-key rotation").
 */
export interface MasterKeyRing {
  readonly current: Uint8Array;
  /** Every key, the current one first. */
  keys(): readonly Uint8Array[];
  /**
   * Asked when a value names a key the ring does not hold: the embedded default re-reads its key
   * files (a rotation may have installed a new key); true when the ring changed.
   */
  refresh(): boolean;
  /** Grows at every change, so that caches of keys derived from the ring know to rebuild. */
  readonly version: number;
}

export function fixedKeyRing(current: Uint8Array, previous: readonly Uint8Array[] = []): MasterKeyRing {
  checkMasterKey(current);
  previous.forEach(checkMasterKey);
  const keys = distinctKeys([current, ...previous]);
  return { current, keys: () => keys, refresh: () => false, version: 0 };
}

/** A ring whose read-only keys can be reloaded (rate-limited by the caller of `load`). */
export function reloadableKeyRing(
  current: Uint8Array,
  previous: readonly Uint8Array[],
  loadPrevious: () => readonly Uint8Array[] | undefined,
): MasterKeyRing {
  let keys = distinctKeys([current, ...previous]);
  const ring = {
    current,
    version: 0,
    keys: () => keys,
    refresh() {
      const loaded = loadPrevious();
      if (loaded === undefined) return false;
      const next = distinctKeys([current, ...keys.slice(1), ...loaded]);
      if (next.length === keys.length) return false;
      keys = next;
      ring.version++;
      return true;
    },
  };
  return ring;
}

export function checkMasterKey(key: Uint8Array): void {
  if (key.length !== 32) throw new TypeError('a master key must be 32 bytes');
}

function distinctKeys(keys: readonly Uint8Array[]): Uint8Array[] {
  const seen = new Set<string>();
  return keys.filter((key) => {
    const hex = Buffer.from(key).toString('hex');
    if (seen.has(hex)) return false;
    seen.add(hex);
    return true;
  });
}

/**
 * The public name of a master key: what envelopes (`kid`) and sealed fields (`v2.<kid>.…`) say
 * they were written under. A hash of the derived block key, so it reveals nothing of the key.
 */
export function masterKeyId(masterKey: Uint8Array): string {
  const blockKey = deriveKey(masterKey, 'block-encryption/v1');
  return `mk1-${createHash('sha256').update('coffer/block-key-id').update(blockKey).digest('hex').slice(0, 16)}`;
}

/** A derived value per key of the ring, current first, rebuilt when the ring changes. */
export function perRingKey<T>(ring: MasterKeyRing, make: (key: Uint8Array) => T): () => readonly T[] {
  let version = -1;
  let values: T[] = [];
  return () => {
    if (version !== ring.version) {
      values = ring.keys().map(make);
      version = ring.version;
    }
    return values;
  };
}

export function asKeyRing(key: Uint8Array | MasterKeyRing): MasterKeyRing {
  return key instanceof Uint8Array ? fixedKeyRing(key) : key;
}
