/**
 * Octet encodings of signatures and proofs, with the draft's validity checks (public keys:
 * public-keys.ts). Decoders return `undefined` for anything the draft calls INVALID.
 */
import {
  G1_POINT_LENGTH,
  PROOF_MIN_LENGTH,
  SCALAR_LENGTH,
  SCALAR_ORDER,
  SIGNATURE_LENGTH,
} from './ciphersuite.ts';
import { type G1, g1FromBytes, g1FromCheckedBytes, g1ToBytes } from './curve.ts';
import { concatOctets, i2osp, os2ip } from './octets.ts';

export interface Signature {
  readonly a: G1;
  readonly e: bigint;
}

export interface Proof {
  readonly abar: G1;
  readonly bbar: G1;
  readonly d: G1;
  readonly eHat: bigint;
  readonly r1Hat: bigint;
  readonly r3Hat: bigint;
  /** m^_j, one per undisclosed message. */
  readonly commitments: readonly bigint[];
  readonly challenge: bigint;
}

export function scalarToOctets(scalar: bigint): Uint8Array {
  return i2osp(scalar, SCALAR_LENGTH);
}

/** A scalar of a signature or proof: 0 < s < r. */
function octetsToNonZeroScalar(octets: Uint8Array): bigint | undefined {
  const scalar = os2ip(octets);
  return scalar === 0n || scalar >= SCALAR_ORDER ? undefined : scalar;
}

export function signatureToOctets(signature: Signature): Uint8Array {
  return concatOctets([g1ToBytes(signature.a), scalarToOctets(signature.e)]);
}

/** `checkedBefore`: this process verified the signature already (curve.ts, g1FromCheckedBytes). */
export function octetsToSignature(octets: Uint8Array, checkedBefore = false): Signature | undefined {
  if (octets.length !== SIGNATURE_LENGTH) return undefined;
  const pointOctets = octets.subarray(0, G1_POINT_LENGTH);
  const a = checkedBefore ? g1FromCheckedBytes(pointOctets) : g1FromBytes(pointOctets);
  if (a === undefined) return undefined;
  const e = octetsToNonZeroScalar(octets.subarray(G1_POINT_LENGTH));
  if (e === undefined) return undefined;
  return { a, e };
}

/** Points already serialized while computing the challenge are passed in to not encode them twice. */
export function proofToOctets(
  encodedPoints: { abar: Uint8Array; bbar: Uint8Array; d: Uint8Array },
  scalars: { eHat: bigint; r1Hat: bigint; r3Hat: bigint; commitments: readonly bigint[]; challenge: bigint },
): Uint8Array {
  return concatOctets([
    encodedPoints.abar,
    encodedPoints.bbar,
    encodedPoints.d,
    scalarToOctets(scalars.eHat),
    scalarToOctets(scalars.r1Hat),
    scalarToOctets(scalars.r3Hat),
    ...scalars.commitments.map(scalarToOctets),
    scalarToOctets(scalars.challenge),
  ]);
}

/** The number of undisclosed messages a proof of this length carries, or undefined. */
function undisclosedCount(proofLength: number): number | undefined {
  const extra = proofLength - PROOF_MIN_LENGTH;
  return extra < 0 || extra % SCALAR_LENGTH !== 0 ? undefined : extra / SCALAR_LENGTH;
}

export function octetsToProof(octets: Uint8Array): Proof | undefined {
  if (undisclosedCount(octets.length) === undefined) return undefined;
  const points: G1[] = [];
  for (let i = 0; i < 3; i++) {
    const point = g1FromBytes(octets.subarray(i * G1_POINT_LENGTH, (i + 1) * G1_POINT_LENGTH));
    if (point === undefined) return undefined;
    points.push(point);
  }
  const scalars: bigint[] = [];
  for (let offset = 3 * G1_POINT_LENGTH; offset < octets.length; offset += SCALAR_LENGTH) {
    const scalar = octetsToNonZeroScalar(octets.subarray(offset, offset + SCALAR_LENGTH));
    if (scalar === undefined) return undefined;
    scalars.push(scalar);
  }
  const [abar, bbar, d] = points as [G1, G1, G1];
  const [eHat, r1Hat, r3Hat] = scalars as [bigint, bigint, bigint];
  return {
    abar,
    bbar,
    d,
    eHat,
    r1Hat,
    r3Hat,
    commitments: scalars.slice(3, -1),
    challenge: scalars.at(-1)!,
  };
}
