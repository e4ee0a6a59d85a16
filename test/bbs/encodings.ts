/**
 * Compressed point encodings for negative tests, made with @noble/curves: valid points, the
 * identity, curve points outside the prime-order subgroup, points off the curve, non-canonical
 * coordinates and bad flag bits.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { i2osp } from '../../src/bbs/octets.ts';

const { Fp, Fp2 } = bls12_381.fields;
const P = Fp.ORDER;
const COMPRESSED = 0x80;
const INFINITY = 0x40;
const SORT = 0x20;

export interface Encoding {
  name: string;
  bytes: Uint8Array;
}

function withFlags(x: Uint8Array, flags: number): Uint8Array {
  const bytes = Uint8Array.from(x);
  bytes[0] = (bytes[0]! & 0x1f) | flags;
  return bytes;
}

const isLargest = (y: bigint) => y > (P - 1n) / 2n;

/** The first x >= start (an Fp element) for which x^3 + b is (or is not) a square. */
function findG1X(start: bigint, square: boolean): { x: bigint; y: bigint } {
  for (let x = start; ; x++) {
    const rhs = Fp.add(Fp.pow(x, 3n), 4n);
    let y: bigint | undefined;
    try {
      y = Fp.sqrt(rhs);
    } catch {
      y = undefined;
    }
    const isSquare = y !== undefined && Fp.eql(Fp.sqr(y), rhs);
    if (isSquare === square) return { x, y: y ?? 0n };
  }
}

export function g1Encodings(): { valid: Encoding[]; invalid: Encoding[] } {
  const point = bls12_381.G1.Point.BASE.multiply(0x1234567n);
  const encoded = point.toBytes();
  const onCurve = findG1X(5n, true);
  // A point on E(Fp) but not in G1: the cofactor is ~2^125, so a point found by x is outside the
  // subgroup unless it happens to be in it, which the assertion below would catch.
  const outside = bls12_381.G1.Point.fromAffine({ x: onCurve.x, y: onCurve.y });
  if (outside.multiply(1n).isTorsionFree()) throw new Error('test point unexpectedly in G1');
  const offCurve = findG1X(5n, false);
  const xOctets = (x: bigint) => i2osp(x, 48);
  return {
    valid: [
      { name: 'a valid point', bytes: encoded },
      {
        name: 'the valid point with the sort bit flipped (its negation)',
        bytes: withFlags(encoded, (encoded[0]! & 0xe0) ^ SORT),
      },
      { name: 'the base point', bytes: bls12_381.G1.Point.BASE.toBytes() },
    ],
    invalid: [
      { name: 'the identity', bytes: withFlags(new Uint8Array(48), COMPRESSED | INFINITY) },
      { name: 'the identity with a payload bit set', bytes: withFlags(i2osp(1n, 48), COMPRESSED | INFINITY) },
      {
        name: 'the identity with the sort bit',
        bytes: withFlags(new Uint8Array(48), COMPRESSED | INFINITY | SORT),
      },
      { name: 'a valid point without the compression bit', bytes: withFlags(encoded, encoded[0]! & SORT) },
      {
        name: 'a curve point outside the subgroup',
        bytes: withFlags(xOctets(onCurve.x), COMPRESSED | (isLargest(onCurve.y) ? SORT : 0)),
      },
      { name: 'an x with no point on the curve', bytes: withFlags(xOctets(offCurve.x), COMPRESSED) },
      { name: 'x = p (non-canonical zero)', bytes: withFlags(xOctets(P), COMPRESSED) },
      {
        name: 'x + p for a valid x (non-canonical)',
        bytes: withFlags(xOctets(point.toAffine().x + P), COMPRESSED | (encoded[0]! & SORT)),
      },
      { name: 'all ones', bytes: new Uint8Array(48).fill(0xff) },
      { name: 'all zeros', bytes: new Uint8Array(48) },
    ],
  };
}

export function g2Encodings(): { valid: Encoding[]; invalid: Encoding[] } {
  const point = bls12_381.G2.Point.BASE.multiply(0x7654321n);
  const encoded = point.toBytes();
  const b = Fp2.create({ c0: 4n, c1: 4n });
  const encodeX = (x: { c0: bigint; c1: bigint }) =>
    Uint8Array.from([...i2osp(x.c1, 48), ...i2osp(x.c0, 48)]);
  let outside: Uint8Array | undefined;
  let offCurve: Uint8Array | undefined;
  for (let c0 = 1n; outside === undefined || offCurve === undefined; c0++) {
    const x = Fp2.create({ c0, c1: 1n });
    const rhs = Fp2.add(Fp2.pow(x, 3n), b);
    let y: { c0: bigint; c1: bigint } | undefined;
    try {
      y = Fp2.sqrt(rhs);
    } catch {
      y = undefined;
    }
    if (y !== undefined && Fp2.eql(Fp2.sqr(y), rhs)) {
      const candidate = bls12_381.G2.Point.fromAffine({ x, y });
      if (outside === undefined && !candidate.isTorsionFree()) {
        const sort = (y.c1 === 0n ? isLargest(y.c0) : isLargest(y.c1)) ? SORT : 0;
        outside = withFlags(encodeX(x), COMPRESSED | sort);
      }
    } else if (offCurve === undefined) {
      offCurve = withFlags(encodeX(x), COMPRESSED);
    }
  }
  const affine = point.toAffine();
  return {
    valid: [
      { name: 'a valid point', bytes: encoded },
      {
        name: 'the valid point with the sort bit flipped (its negation)',
        bytes: withFlags(encoded, (encoded[0]! & 0xe0) ^ SORT),
      },
    ],
    invalid: [
      { name: 'the identity', bytes: withFlags(new Uint8Array(96), COMPRESSED | INFINITY) },
      {
        name: 'the identity with the sort bit',
        bytes: withFlags(new Uint8Array(96), COMPRESSED | INFINITY | SORT),
      },
      { name: 'a valid point without the compression bit', bytes: withFlags(encoded, encoded[0]! & SORT) },
      { name: 'a curve point outside the subgroup', bytes: outside },
      { name: 'an x with no point on the curve', bytes: offCurve },
      {
        name: 'x.c1 + p for a valid x (non-canonical)',
        bytes: withFlags(
          encodeX({ c0: affine.x.c0, c1: affine.x.c1 + P }),
          COMPRESSED | (encoded[0]! & SORT),
        ),
      },
      {
        name: 'x.c0 + p for a valid x (non-canonical)',
        bytes: withFlags(
          encodeX({ c0: affine.x.c0 + P, c1: affine.x.c1 }),
          COMPRESSED | (encoded[0]! & SORT),
        ),
      },
      { name: 'all ones', bytes: new Uint8Array(96).fill(0xff) },
    ],
  };
}
