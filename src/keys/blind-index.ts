import { createHmac, createSecretKey } from 'node:crypto';
import { deriveKey } from './derive-key.ts';
import type { MasterKeyRing } from './master-key-ring.ts';

/**
 * A blind index: a keyed hash (HMAC-SHA-256, base64url) that lets the database find a row by a
 * personal value without holding the value. Without the master key the hash cannot be checked
 * against guesses, unlike a plain hash of an e-mail address.
 */
export type BlindIndex = (value: string) => string;

export function createBlindIndex(masterKey: Uint8Array, purpose: string): BlindIndex {
  // A KeyObject: given raw bytes, every createHmac imports the key anew (about 10 µs).
  const key = createSecretKey(deriveKey(masterKey, `blind-index/${purpose}`));
  return (value) => createHmac('sha256', key).update(value, 'utf8').digest('base64url');
}

/** E-mail addresses match case-insensitively and without surrounding spaces. */
export function createEmailIndex(masterKey: Uint8Array): BlindIndex {
  const index = createBlindIndex(masterKey, 'email/v1');
  return (email) => index(email.trim().toLowerCase());
}

/**
 * The e-mail's index under every key of the ring, the current one first: lookups match rows
 * written under a previous master key until `coffer master-key rotate` has rewritten them.
 */
export function createEmailIndexes(ring: MasterKeyRing): (email: string) => string[] {
  const indexes = ring.keys.map(createEmailIndex);
  return (email) => indexes.map((index) => index(email));
}
