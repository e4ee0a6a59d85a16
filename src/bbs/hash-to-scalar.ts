/**
 * expand_message_xmd (RFC 9380, section 5.3.1) with SHA-256, and the BBS hash_to_scalar and
 * MapMessageToScalarAsHash built on it.
 */
import { hash } from 'node:crypto';
import { EXPAND_LENGTH, Fr, MAP_MESSAGE_TO_SCALAR_DST } from './ciphersuite.ts';
import { concatOctets, os2ip } from './octets.ts';

const SHA256_LENGTH = 32;
/** Z_pad: one zero block of SHA-256's input (64 octets). */
const ZERO_BLOCK = new Uint8Array(64);

function sha256(parts: readonly Uint8Array[]): Uint8Array {
  return hash('sha256', parts.length === 1 ? parts[0]! : concatOctets(parts), 'buffer');
}

export function expandMessageXmd(message: Uint8Array, dst: Uint8Array, length: number): Uint8Array {
  const blockCount = Math.ceil(length / SHA256_LENGTH);
  if (blockCount > 255 || length > 65535 || dst.length > 255) {
    throw new RangeError('expand_message_xmd: requested length or DST too long');
  }
  const dstPrime = concatOctets([dst, Uint8Array.of(dst.length)]);
  const lengthOctets = Uint8Array.of(length >> 8, length & 0xff);
  const b0 = sha256([ZERO_BLOCK, message, lengthOctets, Uint8Array.of(0), dstPrime]);
  const uniform = new Uint8Array(blockCount * SHA256_LENGTH);
  let previous = sha256([b0, Uint8Array.of(1), dstPrime]);
  uniform.set(previous, 0);
  for (let i = 2; i <= blockCount; i++) {
    const mixed = new Uint8Array(SHA256_LENGTH);
    for (let j = 0; j < SHA256_LENGTH; j++) mixed[j] = b0[j]! ^ previous[j]!;
    previous = sha256([mixed, Uint8Array.of(i), dstPrime]);
    uniform.set(previous, (i - 1) * SHA256_LENGTH);
  }
  return uniform.subarray(0, length);
}

/** hash_to_scalar: 48 uniform octets reduced mod r (the bias is below 2^-128). */
export function hashToScalar(message: Uint8Array, dst: Uint8Array): bigint {
  return Fr.create(os2ip(expandMessageXmd(message, dst, EXPAND_LENGTH)));
}

/** MapMessageToScalarAsHash with the ciphersuite's default DST. */
export function messageToScalar(message: Uint8Array, dst: Uint8Array = MAP_MESSAGE_TO_SCALAR_DST): bigint {
  return hashToScalar(message, dst);
}

export function messagesToScalars(messages: readonly Uint8Array[]): bigint[] {
  return messages.map((message) => hashToScalar(message, MAP_MESSAGE_TO_SCALAR_DST));
}
