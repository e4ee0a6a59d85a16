import type { FieldCipher } from '../keys/field-cipher.ts';

/** A sealed secret as responses show it: `••••` and its last four characters, or "" when unset. */
export type SecretMasker = (sealed: string | null, associatedData: string) => string;

/** Bounds the memory: 10,000 masks of a few dozen bytes each. */
const MAX_REMEMBERED = 10_000;

/**
 * Masks sealed secrets without decrypting two fields of every row of every page. A mask is
 * remembered by ciphertext and associated data: a changed secret is a new ciphertext (fresh IV),
 * so a remembered mask is never stale, and a ciphertext copied into another row (other associated
 * data) is decrypted, and refused, as before. Only the four characters that responses show
 * anyway are kept in memory.
 */
export function createSecretMasker(cipher: FieldCipher): SecretMasker {
  const masks = new Map<string, string>();
  return (sealed, associatedData) => {
    if (!sealed) return '';
    const key = `${associatedData}\n${sealed}`;
    let mask = masks.get(key);
    if (mask === undefined) {
      const secret = cipher.decrypt(sealed, associatedData);
      mask = secret ? `••••${secret.slice(-4)}` : '';
      if (masks.size >= MAX_REMEMBERED) masks.delete(masks.keys().next().value as string);
      masks.set(key, mask);
    }
    return mask;
  };
}
