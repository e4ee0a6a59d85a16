/** KeyGen and SkToPk. */
import { Fr, KEYGEN_DST, SCALAR_LENGTH } from './ciphersuite.ts';
import { g2BaseMul, g2ToBytes } from './curve.ts';
import { hashToScalar } from './hash-to-scalar.ts';
import { concatOctets, os2ip } from './octets.ts';

export const MIN_KEY_MATERIAL_LENGTH = 32;

/** KeyGen: SK = hash_to_scalar(key_material || I2OSP(length(key_info), 2) || key_info, key_dst). */
export function keyGen(
  keyMaterial: Uint8Array,
  keyInfo: Uint8Array = new Uint8Array(),
  keyDst: Uint8Array = KEYGEN_DST,
): bigint {
  if (keyMaterial.length < MIN_KEY_MATERIAL_LENGTH) {
    throw new RangeError(`key material must be at least ${MIN_KEY_MATERIAL_LENGTH} octets`);
  }
  if (keyInfo.length > 65535) throw new RangeError('key info must be at most 65535 octets');
  const secretKey = hashToScalar(
    concatOctets([keyMaterial, Uint8Array.of(keyInfo.length >> 8, keyInfo.length & 0xff), keyInfo]),
    keyDst,
  );
  if (secretKey === 0n) throw new Error('KeyGen produced the zero scalar');
  return secretKey;
}

/** SkToPk: W = SK * BP2, compressed. */
export function skToPk(secretKey: bigint): Uint8Array {
  return g2ToBytes(g2BaseMul(secretKey));
}

/** The secret scalar of a 32-octet secret key, reduced mod r as the stock library does. */
export function secretKeyToScalar(secretKey: Uint8Array): bigint {
  if (secretKey.length !== SCALAR_LENGTH) throw new RangeError(`secretKey must be ${SCALAR_LENGTH} octets`);
  const scalar = Fr.create(os2ip(secretKey));
  if (scalar === 0n) throw new RangeError('secretKey is the zero scalar');
  return scalar;
}
