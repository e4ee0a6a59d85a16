import { randomInt } from 'node:crypto';

/**
 * A status list as the bytes both specifications compress, and the entries in it. The two pack
 * bits in opposite orders: IETF Token Status List (draft-ietf-oauth-status-list, "Compressed Byte
 * Array") fills each byte from its least significant bit, W3C Bitstring Status List from its most
 * significant one. Setters change the bytes in place.
 */

/**
 * Entries per list, at least: Bitstring Status List asks for 131,072 (16 KiB) so that one
 * credential hides among many, and Token Status Lists get the same herd.
 */
export const LIST_SIZE = 131_072;

export type TokenStatusBits = 1 | 2 | 4 | 8;

/** The Status Types of draft-ietf-oauth-status-list Coffer sets. */
export const TOKEN_STATUS = { VALID: 0, INVALID: 1, SUSPENDED: 2 } as const;

function checkIndex(bytes: Uint8Array, index: number, bits: number): void {
  if (!Number.isSafeInteger(index) || index < 0 || (index + 1) * bits > bytes.length * 8) {
    throw new RangeError(`index ${index} is outside a list of ${(bytes.length * 8) / bits} entries`);
  }
}

/** A Token Status List of `size` entries, all VALID. */
export const emptyTokenList = (bits: TokenStatusBits, size = LIST_SIZE) =>
  new Uint8Array(Math.ceil((size * bits) / 8));

/** A Bitstring Status List of `size` entries, all clear. */
export const emptyBitstring = (size = LIST_SIZE) => new Uint8Array(Math.ceil(size / 8));

/** Entry `index` of a Token Status List: `bits` bits, index 0 in the low bits of byte 0. */
export function tokenStatusOf(bytes: Uint8Array, bits: TokenStatusBits, index: number): number {
  checkIndex(bytes, index, bits);
  const first = index * bits;
  return (bytes[first >> 3]! >> (first & 7)) & ((1 << bits) - 1);
}

export function setTokenStatus(
  bytes: Uint8Array,
  bits: TokenStatusBits,
  index: number,
  status: number,
): void {
  checkIndex(bytes, index, bits);
  const mask = (1 << bits) - 1;
  if (!Number.isInteger(status) || status < 0 || status > mask) {
    throw new RangeError(`status ${status} does not fit in ${bits} bits`);
  }
  const first = index * bits;
  const shift = first & 7;
  bytes[first >> 3] = (bytes[first >> 3]! & ~(mask << shift)) | (status << shift);
}

/** Entry `index` of a Bitstring Status List: index 0 is the most significant bit of byte 0. */
export function bitstringBitOf(bytes: Uint8Array, index: number): boolean {
  checkIndex(bytes, index, 1);
  return ((bytes[index >> 3]! >> (7 - (index & 7))) & 1) === 1;
}

export function setBitstringBit(bytes: Uint8Array, index: number, set: boolean): void {
  checkIndex(bytes, index, 1);
  const bit = 0x80 >> (index & 7);
  bytes[index >> 3] = set ? bytes[index >> 3]! | bit : bytes[index >> 3]! & ~bit;
}

/** Random draws before the list counts as crowded and its free entries are listed instead. */
const DRAWS = 64;

/**
 * A free index drawn uniformly at random, never the next one in line: a sequential index would
 * tell verifiers which credentials were issued together and in what order (the status list
 * draft's Unlinkability section recommends random indices). Null when the list is full.
 */
export function drawFreeIndex(
  taken: ((index: number) => boolean) | ReadonlySet<number>,
  size = LIST_SIZE,
  random: (max: number) => number = randomInt,
): number | null {
  const isTaken = typeof taken === 'function' ? taken : (index: number) => taken.has(index);
  for (let i = 0; i < DRAWS; i++) {
    const index = random(size);
    if (!isTaken(index)) return index;
  }
  const free: number[] = [];
  for (let index = 0; index < size; index++) if (!isTaken(index)) free.push(index);
  return free.length === 0 ? null : free[random(free.length)]!;
}
