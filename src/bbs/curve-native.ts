/**
 * The curve backend on Coffer's node-api addon over blst (native/bls12-381/), built by `npm ci`
 * where a C compiler is present (scripts/build-native.mjs). Loading it is a try: when the addon
 * is missing, stale or broken, loadNativeCurve says why and curve.ts runs on mcl-wasm.
 *
 * Points are Uint8Arrays holding blst's affine structs, opaque outside this file; octets from
 * outside reach the addon only through its checked decompression.
 *
 * Timing: blst's single-point multiplications (g1Mul, g2BaseMul) are constant time; its
 * multi-scalar multiplications are not (a table indexed by the scalars' digits up to 64 points,
 * Pippenger's buckets beyond), and secret scalars pass through them as on mcl-wasm: the signer's
 * 1/(SK + e) and the prover's blinding scalars.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { Fr, P1_BYTES, SCALAR_LENGTH, SCALAR_ORDER } from './ciphersuite.ts';
import type { CurveBackend, G1, G2, PreparedG2 } from './curve-backend.ts';

/** The addon's functions (native/bls12-381/bls12_381.c); points are its affine structs. */
interface Addon {
  readonly interface: number;
  readonly g1Size: number;
  readonly g2Size: number;
  readonly linesSize: number;
  g1Uncompress(octets: Uint8Array, checkSubgroup: boolean): Uint8Array | null;
  g2Uncompress(octets: Uint8Array, checkSubgroup: boolean): Uint8Array | null;
  g1Compress(point: Uint8Array): Uint8Array;
  g2Compress(point: Uint8Array): Uint8Array;
  g1IsIdentity(point: Uint8Array): boolean;
  g1Negate(point: Uint8Array): Uint8Array;
  g1Mul(point: Uint8Array, scalar: Uint8Array): Uint8Array;
  g2Mul(point: Uint8Array, scalar: Uint8Array): Uint8Array;
  g1MultiScalarMul(points: Uint8Array, scalars: Uint8Array): Uint8Array;
  readonly rowSize: number;
  g1Rows(points: Uint8Array): Uint8Array;
  g1MultiScalarMulRows(rows: Uint8Array, scalars: Uint8Array): Uint8Array;
  hashToG1(message: Uint8Array, dst: Uint8Array): Uint8Array;
  g2Lines(point: Uint8Array): Uint8Array;
  pairingProductIsOne(g1Points: Uint8Array[], g2Lines: Uint8Array[]): boolean;
}

/** The interface version this file speaks (ADDON_INTERFACE in the C source). */
const ADDON_INTERFACE = 2;
const G1_SIZE = 96;
const G2_SIZE = 192;

/** Where scripts/build-native.mjs leaves the addon (gitignored). */
export const NATIVE_ADDON_PATH = fileURLToPath(
  new URL('../../native/bls12-381/build/Release/coffer_bls12_381.node', import.meta.url),
);

const bytesOf = (point: G1 | G2) => point as unknown as Uint8Array;
const asG1 = (bytes: Uint8Array) => bytes as unknown as G1;
const asG2 = (bytes: Uint8Array) => bytes as unknown as G2;

/** Writes a scalar in [0, r) as 32 big-endian octets at `offset` (four 64-bit words, no loop over octets). */
function writeScalar(view: DataView, offset: number, value: bigint): void {
  const scalar = value >= 0n && value < SCALAR_ORDER ? value : Fr.create(value);
  view.setBigUint64(offset, scalar >> 192n);
  view.setBigUint64(offset + 8, BigInt.asUintN(64, scalar >> 128n));
  view.setBigUint64(offset + 16, BigInt.asUintN(64, scalar >> 64n));
  view.setBigUint64(offset + 24, BigInt.asUintN(64, scalar));
}

function scalarOctets(scalar: bigint): Uint8Array {
  const octets = new Uint8Array(SCALAR_LENGTH);
  writeScalar(new DataView(octets.buffer), 0, scalar);
  return octets;
}

/** The points laid end to end, as the addon takes them. */
function concatPoints(points: readonly G1[]): Uint8Array {
  const octets = new Uint8Array(points.length * G1_SIZE);
  for (let i = 0; i < points.length; i++) octets.set(bytesOf(points[i]!), i * G1_SIZE);
  return octets;
}

function scalarsOctets(scalars: readonly bigint[]): Uint8Array {
  const octets = new Uint8Array(scalars.length * SCALAR_LENGTH);
  const view = new DataView(octets.buffer);
  for (let i = 0; i < scalars.length; i++) writeScalar(view, i * SCALAR_LENGTH, scalars[i]!);
  return octets;
}

/**
 * Multi-scalar multiplications over points that recur (the generators, P1) with their
 * precomputation rows kept (g1Rows, computed once per point): blst's own small-MSM path computes
 * every point's rows at each call. A call whose points are mostly fixed takes the kept rows and
 * computes the others' (say D in a proof's T2); the sum is the same point either way.
 */
function createRowCache(addon: Addon) {
  const rowSize = addon.rowSize;
  /** Keyed by the point's own Uint8Array: a fixed point is one object for the life of the process. */
  const rows = new WeakMap<Uint8Array, Uint8Array>();
  return {
    keep(points: readonly G1[]): void {
      const missing = points.filter((point) => !rows.has(bytesOf(point)));
      if (missing.length === 0) return;
      const computed = addon.g1Rows(concatPoints(missing));
      missing.forEach((point, i) => {
        rows.set(bytesOf(point), computed.subarray(i * rowSize, (i + 1) * rowSize));
      });
    },
    /** The sum over kept rows, or undefined when fewer than half the points have them. */
    multiScalarMul(points: readonly G1[], scalars: readonly bigint[]): G1 | undefined {
      const kept = points.map((point) => rows.get(bytesOf(point)));
      const others = points.filter((_, i) => kept[i] === undefined);
      if (others.length * 2 > points.length) return undefined;
      const table = new Uint8Array(points.length * rowSize);
      const computed = others.length > 0 ? addon.g1Rows(concatPoints(others)) : undefined;
      let next = 0;
      kept.forEach((row, i) => {
        if (row !== undefined) table.set(row, i * rowSize);
        else table.set(computed!.subarray(next * rowSize, ++next * rowSize), i * rowSize);
      });
      return asG1(addon.g1MultiScalarMulRows(table, scalarsOctets(scalars)));
    },
  };
}

function createNativeCurve(addon: Addon): CurveBackend {
  const rowCache = createRowCache(addon);
  const decodedOrThrow = <T>(point: T | undefined, name: string): T => {
    if (point === undefined) throw new Error(`${name} does not decode to a valid point`);
    return point;
  };
  const g1FromBytes = (bytes: Uint8Array): G1 | undefined => {
    const point = addon.g1Uncompress(bytes, true);
    return point === null ? undefined : asG1(point);
  };
  const g2FromBytes = (bytes: Uint8Array): G2 | undefined => {
    const point = addon.g2Uncompress(bytes, true);
    return point === null ? undefined : asG2(point);
  };
  const P1 = decodedOrThrow(g1FromBytes(P1_BYTES), 'P1');
  // BP2 is taken from @noble/curves, as the WebAssembly backend takes it.
  const BP2 = decodedOrThrow(g2FromBytes(bls12_381.G2.Point.BASE.toBytes()), 'BP2');
  /** BP2's Miller-loop lines are computed once: every pairing check has BP2 on one side. */
  const bp2Lines = addon.g2Lines(bytesOf(BP2));
  rowCache.keep([P1]);

  return {
    name: 'native',
    g1FromBytes,
    g1FromCheckedBytes(bytes) {
      const point = addon.g1Uncompress(bytes, false);
      return point === null ? undefined : asG1(point);
    },
    g2FromBytes,
    g1ToBytes: (point) => addon.g1Compress(bytesOf(point)),
    g2ToBytes: (point) => addon.g2Compress(bytesOf(point)),
    // Points are kept affine: there is nothing to normalise.
    normalizeG1() {},
    isIdentityG1: (point) => addon.g1IsIdentity(bytesOf(point)),
    g1MultiScalarMul(points, scalars) {
      if (points.length !== scalars.length) throw new RangeError('as many scalars as points are needed');
      if (points.length > 1) {
        const sum = rowCache.multiScalarMul(points, scalars);
        if (sum !== undefined) return sum;
      }
      return asG1(addon.g1MultiScalarMul(concatPoints(points), scalarsOctets(scalars)));
    },
    keepForMultiScalarMul: (points) => rowCache.keep(points),
    g1Mul: (point, scalar) => asG1(addon.g1Mul(bytesOf(point), scalarOctets(scalar))),
    g1Negate: (point) => asG1(addon.g1Negate(bytesOf(point))),
    hashToG1: (message, dst) => asG1(addon.hashToG1(message, dst)),
    P1,
    BP2,
    g2BaseMul: (scalar) => asG2(addon.g2Mul(bytesOf(BP2), scalarOctets(scalar))),
    prepareG2: (point) => ({
      point,
      lines: addon.g2Lines(bytesOf(point)) as unknown as PreparedG2['lines'],
    }),
    // The lines are a Uint8Array on the JavaScript heap: the collector frees them.
    releaseG2() {},
    pairingProductIsIdentity: (left, right, withBase) =>
      addon.pairingProductIsOne(
        [bytesOf(left), bytesOf(withBase)],
        [right.lines as unknown as Uint8Array, bp2Lines],
      ),
  };
}

export type NativeCurveLoad = { ok: true; backend: CurveBackend } | { ok: false; reason: string };

/** The native backend, or why there is none (not built, built for another interface, broken). */
export function loadNativeCurve(addonPath: string = NATIVE_ADDON_PATH): NativeCurveLoad {
  let addon: Addon;
  try {
    addon = createRequire(import.meta.url)(addonPath) as Addon;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      reason:
        code === 'MODULE_NOT_FOUND'
          ? 'the addon is not built (npm ci builds it where a C compiler is present: see scripts/build-native.mjs)'
          : `the addon does not load: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (
    addon.interface !== ADDON_INTERFACE ||
    addon.g1Size !== G1_SIZE ||
    addon.g2Size !== G2_SIZE ||
    !(addon.rowSize > 0)
  ) {
    return {
      ok: false,
      reason: `the addon speaks interface ${addon.interface}, this code ${ADDON_INTERFACE}: rebuild it (node scripts/build-native.mjs)`,
    };
  }
  try {
    return { ok: true, backend: createNativeCurve(addon) };
  } catch (error) {
    return { ok: false, reason: `the addon fails its first use: ${(error as Error).message}` };
  }
}
