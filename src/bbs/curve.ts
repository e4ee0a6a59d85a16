/**
 * The curve backend of this process, chosen once when it loads: the native addon over blst when
 * it loads (curve-native.ts), else mcl-wasm (curve-wasm.ts). BBS_BACKEND=wasm or =native forces
 * one; a forced native backend that does not load stops the process rather than run slower
 * than asked. Worker threads load this module too, and choose alike (they share the environment
 * and the addon file).
 *
 * The operations are re-exported one by one, so the BBS core calls them as plain functions.
 */
import type { CurveBackend, CurveBackendName } from './curve-backend.ts';
import { loadNativeCurve } from './curve-native.ts';

export type { G1, G2, PreparedG2 } from './curve-backend.ts';

export interface CurveChoice {
  readonly name: CurveBackendName;
  /** Why this one: forced by BBS_BACKEND, or why the native backend is not running. */
  readonly reason: string;
}

/** BBS_BACKEND: 'wasm', 'native', or unset/'auto' for the fastest that loads. */
export function requestedBackend(value: string | undefined): CurveBackendName | undefined {
  if (value === undefined || value === '' || value === 'auto') return undefined;
  if (value === 'wasm' || value === 'native') return value;
  throw new Error(`BBS_BACKEND must be "wasm", "native" or "auto", not ${JSON.stringify(value)}`);
}

async function wasm(): Promise<CurveBackend> {
  // Loaded only when chosen: mcl-wasm instantiates its WebAssembly module when imported.
  return (await import('./curve-wasm.ts')).wasmCurve;
}

async function choose(): Promise<{ backend: CurveBackend; choice: CurveChoice }> {
  const requested = requestedBackend(process.env['BBS_BACKEND']);
  if (requested === 'wasm')
    return { backend: await wasm(), choice: { name: 'wasm', reason: 'BBS_BACKEND=wasm' } };
  const native = loadNativeCurve();
  if (native.ok) {
    const reason = requested === 'native' ? 'BBS_BACKEND=native' : 'the native addon loaded';
    return { backend: native.backend, choice: { name: 'native', reason } };
  }
  if (requested === 'native') throw new Error(`BBS_BACKEND=native, but ${native.reason}`);
  return { backend: await wasm(), choice: { name: 'wasm', reason: native.reason } };
}

const { backend, choice } = await choose();

/** Which backend runs, and why: logged at start and exported in /metrics. */
export const curveChoice: CurveChoice = choice;

export const g1FromBytes = backend.g1FromBytes;
export const g1FromCheckedBytes = backend.g1FromCheckedBytes;
export const g2FromBytes = backend.g2FromBytes;
export const g1ToBytes = backend.g1ToBytes;
export const g2ToBytes = backend.g2ToBytes;
export const normalizeG1 = backend.normalizeG1;
export const isIdentityG1 = backend.isIdentityG1;
export const g1MultiScalarMul = backend.g1MultiScalarMul;
export const keepForMultiScalarMul = backend.keepForMultiScalarMul;
export const g1Mul = backend.g1Mul;
export const g1Negate = backend.g1Negate;
export const hashToG1 = backend.hashToG1;
export const P1 = backend.P1;
export const BP2 = backend.BP2;
export const g2BaseMul = backend.g2BaseMul;
export const prepareG2 = backend.prepareG2;
export const releaseG2 = backend.releaseG2;
export const pairingProductIsIdentity = backend.pairingProductIsIdentity;
