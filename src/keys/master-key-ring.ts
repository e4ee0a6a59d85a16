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
  readonly keys: readonly Uint8Array[];
}

export function fixedKeyRing(current: Uint8Array, previous: readonly Uint8Array[] = []): MasterKeyRing {
  checkMasterKey(current);
  previous.forEach(checkMasterKey);
  return { current, keys: distinctKeys([current, ...previous]) };
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

export function asKeyRing(key: Uint8Array | MasterKeyRing): MasterKeyRing {
  return key instanceof Uint8Array ? fixedKeyRing(key) : key;
}
