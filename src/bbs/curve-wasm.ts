/**
 * The BLS12-381 arithmetic the BBS core needs, on mcl-wasm (WebAssembly). mcl-wasm keeps its
 * settings in one module-wide instance: this file initialises it once for BLS12-381 with the
 * zcash/IETF compressed encoding and subgroup checks on decoding, and nothing else in the process
 * may re-initialise it for another curve.
 *
 * Decoding returns `undefined` for bytes that are not a valid, non-identity subgroup point, so
 * callers turn malformed input into INVALID without exceptions.
 *
 * Scalar multiplications here are variable time (mcl-wasm's public API has no constant-time
 * multi-scalar multiplication, and neither has @noble/curves). Secret scalars do pass through
 * them: the signer's 1/(SK + e) and the prover's blinding scalars. That is the price of the
 * speed, a timing side channel to keep in mind where an attacker can time many signatures or
 * proofs precisely.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import * as mcl from 'mcl-wasm';
import { Fr, G1_POINT_LENGTH, G2_POINT_LENGTH, P1_BYTES, SCALAR_LENGTH } from './ciphersuite.ts';
import { i2osp } from './octets.ts';

await mcl.init(mcl.BLS12_381);
mcl.setETHserialization(true);
mcl.verifyOrderG1(true);
mcl.verifyOrderG2(true);

export type G1 = mcl.G1;
export type G2 = mcl.G2;

/** octets_to_point plus the draft's checks: the group's length, on the curve, in the group, not the identity. */
function pointFromBytes<P extends G1 | G2>(point: P, length: number, bytes: Uint8Array): P | undefined {
  if (bytes.length !== length) return undefined;
  try {
    point.deserialize(bytes);
  } catch {
    return undefined;
  }
  return point.isZero() ? undefined : point;
}

/** octets_to_point_E1 with the checks above. */
export const g1FromBytes = (bytes: Uint8Array): G1 | undefined =>
  pointFromBytes(new mcl.G1(), G1_POINT_LENGTH, bytes);

/**
 * A G1 point this process encoded itself after checking it (a signature verified when stored):
 * the subgroup check, three quarters of the decoding time, is skipped. Never for outside input.
 */
export function g1FromCheckedBytes(bytes: Uint8Array): G1 | undefined {
  mcl.verifyOrderG1(false);
  try {
    return pointFromBytes(new mcl.G1(), G1_POINT_LENGTH, bytes);
  } finally {
    mcl.verifyOrderG1(true);
  }
}

/** octets_to_point_E2 with the checks above. */
export const g2FromBytes = (bytes: Uint8Array): G2 | undefined =>
  pointFromBytes(new mcl.G2(), G2_POINT_LENGTH, bytes);

export function g1ToBytes(point: G1): Uint8Array {
  return point.serialize();
}

export function g2ToBytes(point: G2): Uint8Array {
  return point.serialize();
}

/** Converts several points to affine form with one field inversion, before they are serialized. */
export function normalizeG1(points: G1[]): void {
  mcl.normalizeVec(points);
}

export function isIdentityG1(point: G1): boolean {
  return point.isZero();
}

export function scalarToFr(scalar: bigint): mcl.Fr {
  const fr = new mcl.Fr();
  fr.setBigEndianMod(i2osp(Fr.create(scalar), SCALAR_LENGTH));
  return fr;
}

/** sum(points[i] * scalars[i]) in one multi-scalar multiplication (variable time, see above). */
export function g1MultiScalarMul(points: readonly G1[], scalars: readonly bigint[]): G1 {
  return mcl.mulVec(points as G1[], scalars.map(scalarToFr));
}

export function g1Mul(point: G1, scalar: bigint): G1 {
  return mcl.mul(point, scalarToFr(scalar));
}

export function g1Negate(point: G1): G1 {
  return mcl.neg(point);
}

function requirePoint<T>(point: T | undefined, name: string): T {
  if (point === undefined) throw new Error(`${name} does not decode to a valid point`);
  return point;
}

/** P1 of the ciphersuite. */
export const P1 = requirePoint(g1FromBytes(P1_BYTES), 'P1');
/** BP2, the standard generator of G2, taken from @noble/curves to not depend on mcl's choice. */
export const BP2 = requirePoint(g2FromBytes(bls12_381.G2.Point.BASE.toBytes()), 'BP2');
/** BP2's Miller-loop lines are computed once: every pairing check has BP2 on one side. */
const PRECOMPUTED_BP2 = new mcl.PrecomputedG2(BP2);

export function g2BaseMul(scalar: bigint): G2 {
  return mcl.mul(BP2, scalarToFr(scalar));
}

/** A G2 point with its Miller-loop lines computed, for a point used in many pairings. */
export interface PreparedG2 {
  readonly point: G2;
  readonly lines: mcl.PrecomputedG2;
}

/** The lines live in WebAssembly memory: whoever prepares a point must `releaseG2` it. */
export function prepareG2(point: G2): PreparedG2 {
  return { point, lines: new mcl.PrecomputedG2(point) };
}

export function releaseG2(prepared: PreparedG2): void {
  prepared.lines.destroy();
}

/**
 * Whether e(left, right) * e(withBase, BP2) is the identity of GT: two Miller loops over
 * precomputed lines, sharing one final exponentiation.
 */
export function pairingProductIsIdentity(left: G1, right: PreparedG2, withBase: G1): boolean {
  return mcl.finalExp(mcl.precomputedMillerLoop2(left, right.lines, withBase, PRECOMPUTED_BP2)).isOne();
}
