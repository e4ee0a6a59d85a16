import { hkdfSync } from 'node:crypto';

/**
 * A 32-byte key for one purpose, derived from the master key with HKDF-SHA-256, so that no two
 * uses (field encryption, block encryption, blind indexes, …) ever share key material.
 */
export function deriveKey(masterKey: Uint8Array, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, new Uint8Array(0), `coffer/${purpose}`, 32));
}
