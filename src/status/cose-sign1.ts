import { type KeyObject, sign } from 'node:crypto';
import * as cborg from 'cborg';
import { algorithmFitsKey, verifyCoseSignature } from '../formats/mso-mdoc/mdoc-context.ts';

/**
 * COSE_Sign1_Tagged (RFC 9052 §4.2) made and read with cborg and node:crypto, for CWT status
 * lists: small enough to own, and the Token Status List draft fixes what it must hold (the tag,
 * a protected header, an attached payload).
 */

/** CBOR tag 18 in its one-byte head: major type 6, value 18. */
const SIGN1_TAG = 0xd2;

export const COSE_HEADER = { alg: 1, typ: 16, x5chain: 33 } as const;

export interface Sign1 {
  /** The protected header as signed (a bstr's content). */
  protectedBytes: Uint8Array;
  protectedHeader: Map<unknown, unknown>;
  unprotectedHeader: Map<unknown, unknown>;
  payload: Uint8Array;
  signature: Uint8Array;
}

export class CoseError extends Error {
  override readonly name = 'CoseError';
}

const DECODE_OPTIONS = { useMaps: true, rejectDuplicateMapKeys: true } as const;

/** The Sig_structure the signature covers (RFC 9052 §4.4), no external AAD. */
const toBeSigned = (protectedBytes: Uint8Array, payload: Uint8Array) =>
  cborg.encode(['Signature1', protectedBytes, new Uint8Array(), payload]);

/** Signs `payload` with ES256 (raw r‖s, as COSE has ECDSA signatures). */
export function signSign1ES256(
  protectedHeader: Map<number, unknown>,
  unprotectedHeader: Map<number, unknown>,
  payload: Uint8Array,
  privateKey: KeyObject,
): Uint8Array {
  const protectedBytes = cborg.encode(protectedHeader);
  const signature = sign('sha256', toBeSigned(protectedBytes, payload), {
    key: privateKey,
    dsaEncoding: 'ieee-p1363',
  });
  const body = cborg.encode([protectedBytes, unprotectedHeader, payload, new Uint8Array(signature)]);
  const tagged = new Uint8Array(body.length + 1);
  tagged[0] = SIGN1_TAG;
  tagged.set(body, 1);
  return tagged;
}

/** Reads a COSE_Sign1_Tagged; nothing is verified yet. */
export function decodeSign1(bytes: Uint8Array): Sign1 {
  if (bytes[0] !== SIGN1_TAG) throw new CoseError('it is not a tagged COSE_Sign1 (tag 18)');
  let parts: unknown;
  let protectedHeader: unknown;
  try {
    parts = cborg.decode(bytes.subarray(1), DECODE_OPTIONS);
    if (!Array.isArray(parts) || parts.length !== 4) throw new CoseError('not four members');
    const [protectedBytes] = parts;
    protectedHeader =
      protectedBytes instanceof Uint8Array && protectedBytes.length > 0
        ? cborg.decode(protectedBytes, DECODE_OPTIONS)
        : new Map();
  } catch {
    throw new CoseError('it is not a COSE_Sign1 structure');
  }
  const [protectedBytes, unprotectedHeader, payload, signature] = parts as unknown[];
  if (
    !(protectedBytes instanceof Uint8Array) ||
    !(protectedHeader instanceof Map) ||
    !(unprotectedHeader instanceof Map) ||
    !(signature instanceof Uint8Array)
  ) {
    throw new CoseError('it is not a COSE_Sign1 structure');
  }
  if (!(payload instanceof Uint8Array)) throw new CoseError('its payload is detached or not a byte string');
  return { protectedBytes, protectedHeader, unprotectedHeader, payload, signature };
}

/** Whether the signature verifies with `key` in the protected header's algorithm, which must fit the key. */
export function verifySign1(sign1: Sign1, key: KeyObject): boolean {
  const alg = sign1.protectedHeader.get(COSE_HEADER.alg);
  if (typeof alg !== 'number' || !algorithmFitsKey(alg, key)) return false;
  return verifyCoseSignature(alg, key, toBeSigned(sign1.protectedBytes, sign1.payload), sign1.signature);
}
