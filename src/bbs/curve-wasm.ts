/**
 * The curve backend on mcl-wasm (WebAssembly): always available. mcl-wasm keeps its settings in
 * one module-wide instance: this file initialises it once for BLS12-381 with the zcash/IETF
 * compressed encoding and subgroup checks on decoding, and nothing else in the process may
 * re-initialise it for another curve.
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
import type { CurveBackend, G1, G2, PreparedG2 } from './curve-backend.ts';
import { i2osp } from './octets.ts';

await mcl.init(mcl.BLS12_381);
mcl.setETHserialization(true);
mcl.verifyOrderG1(true);
mcl.verifyOrderG2(true);

// The interface's points are opaque; here they are mcl's objects.
const asG1 = (point: mcl.G1) => point as unknown as G1;
const asG2 = (point: mcl.G2) => point as unknown as G2;
const mclG1 = (point: G1) => point as unknown as mcl.G1;
const mclG2 = (point: G2) => point as unknown as mcl.G2;
const mclLines = (prepared: PreparedG2) => prepared.lines as unknown as mcl.PrecomputedG2;

/** octets_to_point plus the draft's checks: the group's length, on the curve, in the group, not the identity. */
function pointFromBytes<P extends mcl.G1 | mcl.G2>(
  point: P,
  length: number,
  bytes: Uint8Array,
): P | undefined {
  if (bytes.length !== length) return undefined;
  try {
    point.deserialize(bytes);
  } catch {
    return undefined;
  }
  return point.isZero() ? undefined : point;
}

function g1FromBytes(bytes: Uint8Array): G1 | undefined {
  const point = pointFromBytes(new mcl.G1(), G1_POINT_LENGTH, bytes);
  return point && asG1(point);
}

function g1FromCheckedBytes(bytes: Uint8Array): G1 | undefined {
  mcl.verifyOrderG1(false);
  try {
    return g1FromBytes(bytes);
  } finally {
    mcl.verifyOrderG1(true);
  }
}

function g2FromBytes(bytes: Uint8Array): G2 | undefined {
  const point = pointFromBytes(new mcl.G2(), G2_POINT_LENGTH, bytes);
  return point && asG2(point);
}

function scalarToFr(scalar: bigint): mcl.Fr {
  const fr = new mcl.Fr();
  fr.setBigEndianMod(i2osp(Fr.create(scalar), SCALAR_LENGTH));
  return fr;
}

function requirePoint<T>(point: T | undefined, name: string): T {
  if (point === undefined) throw new Error(`${name} does not decode to a valid point`);
  return point;
}

const P1 = requirePoint(g1FromBytes(P1_BYTES), 'P1');
// BP2 is taken from @noble/curves, to not depend on mcl's choice of generator.
const BP2 = requirePoint(g2FromBytes(bls12_381.G2.Point.BASE.toBytes()), 'BP2');
/** BP2's Miller-loop lines are computed once: every pairing check has BP2 on one side. */
const PRECOMPUTED_BP2 = new mcl.PrecomputedG2(mclG2(BP2));

export const wasmCurve: CurveBackend = {
  name: 'wasm',
  g1FromBytes,
  g1FromCheckedBytes,
  g2FromBytes,
  g1ToBytes: (point) => mclG1(point).serialize(),
  g2ToBytes: (point) => mclG2(point).serialize(),
  normalizeG1(points) {
    mcl.normalizeVec(points as unknown as mcl.G1[]);
  },
  isIdentityG1: (point) => mclG1(point).isZero(),
  g1MultiScalarMul: (points, scalars) =>
    // mcl refuses an empty sum; the interface's is the identity (a fresh mcl point is zero).
    asG1(
      points.length === 0 ? new mcl.G1() : mcl.mulVec(points as unknown as mcl.G1[], scalars.map(scalarToFr)),
    ),
  // mcl's mulVec keeps no tables between calls.
  keepForMultiScalarMul() {},
  g1Mul: (point, scalar) => asG1(mcl.mul(mclG1(point), scalarToFr(scalar))),
  g1Negate: (point) => asG1(mcl.neg(mclG1(point))),
  hashToG1(message, dst) {
    // hash_to_curve with a caller-chosen DST is not in mcl-wasm's public API: noble computes the
    // point, mcl takes it by its compressed encoding.
    const encoded = bls12_381.G1.hashToCurve(message, { DST: dst }).toBytes();
    return requirePoint(g1FromBytes(encoded), 'hash_to_curve output');
  },
  P1,
  BP2,
  g2BaseMul: (scalar) => asG2(mcl.mul(mclG2(BP2), scalarToFr(scalar))),
  prepareG2: (point) => ({
    point,
    lines: new mcl.PrecomputedG2(mclG2(point)) as unknown as PreparedG2['lines'],
  }),
  releaseG2(prepared) {
    mclLines(prepared).destroy();
  },
  pairingProductIsIdentity: (left, right, withBase) =>
    mcl
      .finalExp(mcl.precomputedMillerLoop2(mclG1(left), mclLines(right), mclG1(withBase), PRECOMPUTED_BP2))
      .isOne(),
};
