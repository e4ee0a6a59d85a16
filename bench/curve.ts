/**
 * The curve backends side by side (src/bbs/curve-backend.ts): the operations BBS spends its time
 * in, on mcl-wasm and on the native addon over blst, in one process, each operation timed for
 * both back to back so both see about the same machine load. Without a built addon only mcl-wasm
 * is measured, and the table says why.
 *
 * `node bench/curve.ts [--iterations=200 --warmup=20]`, or `npm run bench -- --only=curve`.
 * Single thread; prints a markdown table (microseconds).
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Fr, GENERATOR_DST } from '../src/bbs/ciphersuite.ts';
import type { CurveBackend } from '../src/bbs/curve-backend.ts';
import { loadNativeCurve } from '../src/bbs/curve-native.ts';
import { wasmCurve } from '../src/bbs/curve-wasm.ts';
import { os2ip } from '../src/bbs/octets.ts';
import { sample, summarise } from './timing.ts';

const randomScalar = () => Fr.create(os2ip(randomBytes(48)));

/** One operation per row, on a backend: a closure over inputs made beforehand. */
function operations(curve: CurveBackend): Array<[string, () => unknown]> {
  const scalars = Array.from({ length: 64 }, randomScalar);
  const points = scalars.map((k) => curve.g1Mul(curve.P1, k));
  const encoded = curve.g1ToBytes(points[0]!);
  const key = curve.prepareG2(curve.g2BaseMul(randomScalar()));
  const a = points[1]!;
  const b = points[2]!;
  const message = randomBytes(48);
  return [
    ['G1 multiplication', () => curve.g1Mul(a, scalars[3]!)],
    ['G2 multiplication (BP2)', () => curve.g2BaseMul(scalars[4]!)],
    ['G1 MSM, 2 points', () => curve.g1MultiScalarMul(points.slice(0, 2), scalars.slice(0, 2))],
    [
      'G1 MSM, 12 points (B, 10 claims)',
      () => curve.g1MultiScalarMul(points.slice(0, 12), scalars.slice(0, 12)),
    ],
    ['G1 MSM, 15 points', () => curve.g1MultiScalarMul(points.slice(0, 15), scalars.slice(0, 15))],
    [
      'G1 MSM, 52 points (B, 50 claims)',
      () => curve.g1MultiScalarMul(points.slice(0, 52), scalars.slice(0, 52)),
    ],
    ['pairing check e(A, W) e(C, BP2) = 1', () => curve.pairingProductIsIdentity(a, key, b)],
    ['hash-to-G1 (a generator)', () => curve.hashToG1(message, GENERATOR_DST)],
    ['G1 decompression, subgroup checked', () => curve.g1FromBytes(encoded)],
    ['G1 decompression, unchecked', () => curve.g1FromCheckedBytes(encoded)],
    ['G1 compression', () => curve.g1ToBytes(a)],
    ['G2 preparation (Miller-loop lines)', () => curve.releaseG2(curve.prepareG2(key.point))],
  ];
}

export async function runCurveBenchmark(options: { iterations: number; warmup: number }): Promise<string> {
  const native = loadNativeCurve();
  const backends = native.ok ? [wasmCurve, native.backend] : [wasmCurve];
  const table = backends.map(operations);
  const rows: string[] = [];
  for (const [row, [name]] of table[0]!.entries()) {
    const medians: number[] = [];
    for (const ops of table) {
      const run = ops[row]![1];
      const timings = summarise(await sample(async () => run(), options.warmup, options.iterations));
      medians.push(timings.median * 1000);
    }
    const [wasm, blst] = medians as [number, number | undefined];
    const cells = [name, wasm.toFixed(0), blst === undefined ? '-' : blst.toFixed(0)];
    cells.push(blst === undefined ? '-' : `${(wasm / blst).toFixed(1)}×`);
    rows.push(`| ${cells.join(' | ')} |`);
  }
  const note = native.ok ? '' : `\n\nNative backend not measured: ${native.reason}.`;
  return (
    [
      `### Curve backends (median µs, ${options.iterations} runs each)`,
      '',
      '| operation | mcl-wasm | native (blst) | speed-up |',
      '| --- | ---: | ---: | ---: |',
      ...rows,
    ].join('\n') + note
  );
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { iterations: { type: 'string', default: '200' }, warmup: { type: 'string', default: '20' } },
  });
  console.log(
    await runCurveBenchmark({ iterations: Number(values.iterations), warmup: Number(values.warmup) }),
  );
}
