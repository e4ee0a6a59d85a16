/**
 * The BLS12-381 arithmetic the BBS core needs, as one interface with two implementations:
 * curve-wasm.ts (mcl-wasm, always there) and curve-native.ts (a node-api addon over blst, there
 * when the install could compile it). curve.ts picks one when the process loads.
 *
 * Points are opaque: each backend has its own representation, and a point of one backend is
 * never handed to the other. Decoding returns `undefined` for octets that are not a valid,
 * non-identity subgroup point, so callers turn malformed input into INVALID without exceptions.
 */

declare const g1Brand: unique symbol;
declare const g2Brand: unique symbol;
declare const linesBrand: unique symbol;

/** A point of G1, in the representation of the backend that made it. */
export interface G1 {
  readonly [g1Brand]: true;
}

/** A point of G2, in the representation of the backend that made it. */
export interface G2 {
  readonly [g2Brand]: true;
}

/** A G2 point with its Miller-loop lines computed, for a point used in many pairings. */
export interface PreparedG2 {
  readonly point: G2;
  readonly lines: { readonly [linesBrand]: true };
}

export type CurveBackendName = 'wasm' | 'native';

export interface CurveBackend {
  readonly name: CurveBackendName;
  /** octets_to_point_E1 plus the draft's checks: the length, on the curve, in the group, not the identity. */
  g1FromBytes(bytes: Uint8Array): G1 | undefined;
  /**
   * A G1 point this process encoded itself after checking it (a signature verified when stored):
   * the subgroup check, most of the decoding time, is skipped. Never for outside input.
   */
  g1FromCheckedBytes(bytes: Uint8Array): G1 | undefined;
  /** octets_to_point_E2 with the checks of g1FromBytes. */
  g2FromBytes(bytes: Uint8Array): G2 | undefined;
  /** The compressed encoding (zcash/IETF). */
  g1ToBytes(point: G1): Uint8Array;
  g2ToBytes(point: G2): Uint8Array;
  /** Prepares several points for encoding at once (one field inversion), where that saves time. */
  normalizeG1(points: G1[]): void;
  isIdentityG1(point: G1): boolean;
  /** sum(points[i] * scalars[i]) in one multi-scalar multiplication; scalars in [0, r). */
  g1MultiScalarMul(points: readonly G1[], scalars: readonly bigint[]): G1;
  /**
   * Points that will take part in many multi-scalar multiplications (the generators): a backend
   * may keep work for them (tables of multiples). Never changes a result.
   */
  keepForMultiScalarMul(points: readonly G1[]): void;
  g1Mul(point: G1, scalar: bigint): G1;
  g1Negate(point: G1): G1;
  /** hash_to_curve (RFC 9380), suite BLS12381G1_XMD:SHA-256_SSWU_RO_, with the caller's DST. */
  hashToG1(message: Uint8Array, dst: Uint8Array): G1;
  /** P1 of the BBS ciphersuite. */
  readonly P1: G1;
  /** BP2, the standard generator of G2. */
  readonly BP2: G2;
  /** BP2 * scalar. */
  g2BaseMul(scalar: bigint): G2;
  /** Whoever prepares a point must `releaseG2` it (the lines may live outside the JavaScript heap). */
  prepareG2(point: G2): PreparedG2;
  releaseG2(prepared: PreparedG2): void;
  /** Whether e(left, right) * e(withBase, BP2) is the identity of GT (one final exponentiation). */
  pairingProductIsIdentity(left: G1, right: PreparedG2, withBase: G1): boolean;
}
