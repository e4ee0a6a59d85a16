import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import * as dagCbor from '@ipld/dag-cbor';
import { deriveKey } from '../keys/derive-key.ts';
import { asKeyRing, type MasterKeyRing, masterKeyId } from '../keys/master-key-ring.ts';
import { StorageError } from './errors.ts';

/** Whose data a block holds and what it is; bound into the ciphertext as associated data. */
export interface BlockContext {
  owner: string;
  kind: string;
}

/** The stored form of a block with personal data; its dag-cbor encoding is what the CID names. */
export interface Envelope {
  v: 1;
  kid: string;
  alg: 'A256GCM';
  iv: Uint8Array;
  ct: Uint8Array;
}

export interface EnvelopeCipher {
  readonly kid: string;
  seal(value: unknown, context: BlockContext): Envelope;
  open(envelope: unknown, context: BlockContext): unknown;
}

const TAG_LENGTH = 16;
const IV_LENGTH = 12;

function checkContext(context: BlockContext): void {
  if (typeof context?.owner !== 'string' || context.owner === '')
    throw new TypeError('owner must be a non-empty string');
  if (typeof context?.kind !== 'string' || context.kind === '')
    throw new TypeError('kind must be a non-empty string');
}

// The header fields are authenticated too, so that neither the key id nor the algorithm can be swapped.
function associatedData(kid: string, context: BlockContext): Uint8Array {
  return dagCbor.encode({ v: 1, alg: 'A256GCM', kid, owner: context.owner, kind: context.kind });
}

function isEnvelope(value: unknown): value is Envelope {
  const e = value as Partial<Envelope> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    e.v === 1 &&
    e.alg === 'A256GCM' &&
    typeof e.kid === 'string' &&
    e.iv instanceof Uint8Array &&
    e.iv.length === IV_LENGTH &&
    e.ct instanceof Uint8Array &&
    e.ct.length >= TAG_LENGTH
  );
}

/**
 * The key id of a block that is a Coffer envelope, else undefined: garbage collection removes
 * only blocks that are Coffer's own (a Kubo node may pin other applications' blocks), and a
 * backup names the keys its blocks need.
 */
export function envelopeKeyId(bytes: Uint8Array): string | undefined {
  let value: unknown;
  try {
    value = dagCbor.decode(bytes);
  } catch {
    return undefined;
  }
  return isEnvelope(value) ? value.kid : undefined;
}

/**
 * AES-256-GCM envelopes under a key derived from the master key. The key id names the master key
 * (keys/master-key-ring.ts), so a block is opened with the key of the ring that wrote it, and one
 * written under a key the ring does not hold is reported as such instead of as a generic failure.
 * New envelopes are always sealed under the ring's current key.
 */
export function createEnvelopeCipher(masterKey: Uint8Array | MasterKeyRing): EnvelopeCipher {
  const ring = asKeyRing(masterKey);
  // KeyObjects: given raw bytes, every createCipheriv imports the key anew (about 10 µs).
  const blockKeys = ring.keys.map((key) => ({
    kid: masterKeyId(key),
    key: createSecretKey(deriveKey(key, 'block-encryption/v1')),
  }));
  const { kid, key } = blockKeys[0]!;
  const keyOf = (wanted: string): KeyObject | undefined => blockKeys.find((k) => k.kid === wanted)?.key;

  return {
    kid,

    seal(value, context) {
      checkContext(context);
      const plaintext = dagCbor.encode(value);
      const iv = randomBytes(IV_LENGTH);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(associatedData(kid, context));
      const ct = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
      return { v: 1, kid, alg: 'A256GCM', iv: new Uint8Array(iv), ct: new Uint8Array(ct) };
    },

    open(envelope, context) {
      checkContext(context);
      if (!isEnvelope(envelope)) {
        throw new StorageError(
          'decryption_failed',
          'The block is not an encrypted envelope that Coffer can read.',
        );
      }
      const openingKey = keyOf(envelope.kid);
      if (openingKey === undefined) {
        throw new StorageError(
          'decryption_failed',
          `The block was encrypted under key ${envelope.kid}, but this service holds ${blockKeys.map((k) => k.kid).join(', ')}: MASTER_KEY differs from the one that wrote it (or that key is missing from MASTER_KEY_PREVIOUS).`,
        );
      }
      let plaintext: Buffer;
      try {
        const decipher = createDecipheriv('aes-256-gcm', openingKey, envelope.iv, {
          authTagLength: TAG_LENGTH,
        });
        decipher.setAAD(associatedData(envelope.kid, context));
        decipher.setAuthTag(envelope.ct.subarray(envelope.ct.length - TAG_LENGTH));
        plaintext = Buffer.concat([decipher.update(envelope.ct.subarray(0, -TAG_LENGTH)), decipher.final()]);
      } catch (error) {
        throw new StorageError(
          'decryption_failed',
          'The block does not decrypt for this owner and kind: it belongs to another owner or kind, or it was altered.',
          { cause: error },
        );
      }
      return dagCbor.decode(plaintext);
    },
  };
}
