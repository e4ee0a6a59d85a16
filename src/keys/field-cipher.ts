import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { deriveKey } from './derive-key.ts';
import { asKeyRing, type MasterKeyRing, masterKeyId } from './master-key-ring.ts';

/**
 * Encrypts small secrets kept in database columns (ESP tokens, reCAPTCHA keys, private keys)
 * with AES-256-GCM. The associated data binds a value to its row and column, so a value copied
 * into another row does not decrypt.
 * Format: "v2.<kid>.<iv>.<ciphertext+tag>", iv and ciphertext in base64url, kid naming the master
 * key (keys/master-key-ring.ts) so that a value is opened with the key of the ring that sealed it.
 * Values sealed before key ids ("v1.<iv>.<ciphertext+tag>") are tried with every key of the ring.
 */
export interface FieldCipher {
  encrypt(plaintext: string, associatedData: string): string;
  decrypt(sealed: string, associatedData: string): string;
  /** The key id new values are sealed under. */
  readonly kid: string;
}

/** The key id a sealed value names; undefined for a v1 value (sealed before key ids). */
export function sealedKeyId(sealed: string): string | undefined {
  return sealed.startsWith('v2.') ? sealed.split('.')[1] : undefined;
}

interface FieldKey {
  kid: string;
  key: KeyObject;
}

function open(key: KeyObject, ivText: string, bodyText: string, associatedData: string): string {
  const body = Buffer.from(bodyText, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivText, 'base64url'));
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString(
    'utf8',
  );
}

export function createFieldCipher(masterKey: Uint8Array | MasterKeyRing): FieldCipher {
  const ring = asKeyRing(masterKey);
  // KeyObjects, not the raw bytes: given bytes, every createCipheriv imports the key anew, which
  // costs 10 µs, three times the encryption of a short value.
  const fieldKeys = ring.keys.map(
    (key): FieldKey => ({
      kid: masterKeyId(key),
      key: createSecretKey(deriveKey(key, 'field-encryption/v1')),
    }),
  );
  const current = fieldKeys[0]!;
  const keyOf = (kid: string): KeyObject | undefined => fieldKeys.find((k) => k.kid === kid)?.key;
  return {
    kid: current.kid,
    encrypt(plaintext, associatedData) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `v2.${current.kid}.${iv.toString('base64url')}.${body.toString('base64url')}`;
    },
    decrypt(sealed, associatedData) {
      const parts = sealed.split('.');
      if (parts[0] === 'v2' && parts.length === 4 && parts[2] && parts[3]) {
        const key = keyOf(parts[1]!);
        if (key === undefined) {
          throw new Error(
            `field ciphertext was sealed under master key ${parts[1]}, which this service does not hold`,
          );
        }
        return open(key, parts[2], parts[3], associatedData);
      }
      if (parts[0] !== 'v1' || parts.length !== 3 || !parts[1] || !parts[2]) {
        throw new Error('field ciphertext has an unknown format');
      }
      // No key id: the key that opens it is the one whose tag checks.
      let failure: unknown;
      for (const { key } of fieldKeys) {
        try {
          return open(key, parts[1], parts[2], associatedData);
        } catch (error) {
          failure = error;
        }
      }
      throw failure;
    },
  };
}
