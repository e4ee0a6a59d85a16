/**
 * The two curve backends (src/bbs/curve-backend.ts) against each other and against independent
 * references, in one process: the same scalars and points give the same octets on mcl-wasm and
 * on the native addon over blst. The BBS suite as a whole runs on each backend in turn
 * (other-backend.test.ts). Without a built addon the native side is skipped, and says why.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import fc from 'fast-check';
import { Fr, GENERATOR_DST, P1_BYTES, SCALAR_ORDER } from '../../src/bbs/ciphersuite.ts';
import { requestedBackend } from '../../src/bbs/curve.ts';
import type { CurveBackend, G1 } from '../../src/bbs/curve-backend.ts';
import { loadNativeCurve, NATIVE_ADDON_PATH } from '../../src/bbs/curve-native.ts';
import { wasmCurve } from '../../src/bbs/curve-wasm.ts';
import { g1Encodings, g2Encodings } from './encodings.ts';
import { toHex } from './fixtures.ts';

const native = loadNativeCurve();
const skip = native.ok ? false : `the native backend is not available: ${native.reason}`;
const backends: CurveBackend[] = native.ok ? [wasmCurve, native.backend] : [wasmCurve];

const scalar = fc.oneof(
  fc.bigInt({ min: 0n, max: SCALAR_ORDER - 1n }),
  fc.constantFrom(0n, 1n, 2n, SCALAR_ORDER - 1n, SCALAR_ORDER - 2n),
);
const nonZeroScalar = fc.bigInt({ min: 1n, max: SCALAR_ORDER - 1n });

/** Runs `compute` on every backend and returns the results, the first being mcl-wasm's. */
function onEach<T>(compute: (curve: CurveBackend) => T): T[] {
  return backends.map(compute);
}

function assertSame<T>(results: T[], label: string): void {
  for (const result of results.slice(1)) assert.deepEqual(result, results[0], label);
}

test('BBS_BACKEND takes wasm, native or auto, and refuses anything else', () => {
  assert.equal(requestedBackend(undefined), undefined);
  assert.equal(requestedBackend(''), undefined);
  assert.equal(requestedBackend('auto'), undefined);
  assert.equal(requestedBackend('wasm'), 'wasm');
  assert.equal(requestedBackend('native'), 'native');
  assert.throws(() => requestedBackend('blst'), /BBS_BACKEND must be/);
});

test('an addon that is not there is reported, not thrown', () => {
  const missing = loadNativeCurve(path.join(path.dirname(NATIVE_ADDON_PATH), 'no-such-addon.node'));
  assert.equal(missing.ok, false);
  assert.match(!missing.ok ? missing.reason : '', /not built/);
});

describe('the native backend against mcl-wasm', { skip }, () => {
  const [wasm, blst] = backends as [CurveBackend, CurveBackend];
  const g1Hex = (curve: CurveBackend, point: G1) => toHex(curve.g1ToBytes(point));

  test('P1 and BP2 encode as the ciphersuite and @noble/curves say', () => {
    for (const curve of backends) {
      assert.equal(g1Hex(curve, curve.P1), toHex(P1_BYTES), curve.name);
      assert.equal(toHex(curve.g2ToBytes(curve.BP2)), toHex(bls12_381.G2.Point.BASE.toBytes()), curve.name);
    }
  });

  test('G1 and G2 multiplication give the same octets, and agree with @noble/curves', () => {
    fc.assert(
      fc.property(scalar, (k) => {
        const g1 = onEach((curve) => {
          const point = curve.g1Mul(curve.P1, k);
          return curve.isIdentityG1(point) ? 'identity' : g1Hex(curve, point);
        });
        assertSame(g1, `P1 * ${k}`);
        if (k !== 0n)
          assert.equal(g1[1], toHex(bls12_381.G1.Point.fromBytes(P1_BYTES).multiply(k).toBytes()));
        const g2 = onEach((curve) => (k === 0n ? 'identity' : toHex(curve.g2ToBytes(curve.g2BaseMul(k)))));
        assertSame(g2, `BP2 * ${k}`);
        if (k !== 0n) assert.equal(g2[1], toHex(bls12_381.G2.Point.BASE.multiply(k).toBytes()));
      }),
      { numRuns: 60 },
    );
  });

  test('multi-scalar multiplications agree on both sides of blst’s 64-point method boundary', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 72 })
          .chain((n) =>
            fc.tuple(
              fc.array(nonZeroScalar, { minLength: n, maxLength: n }),
              fc.array(scalar, { minLength: n, maxLength: n }),
            ),
          ),
        ([pointScalars, scalars]) => {
          const results = onEach((curve) => {
            const points = pointScalars.map((k) => curve.g1Mul(curve.P1, k));
            const sum = curve.g1MultiScalarMul(points, scalars);
            return curve.isIdentityG1(sum) ? 'identity' : g1Hex(curve, sum);
          });
          assertSame(results, `${scalars.length} points`);
          // The same sum by the definition: P1 * sum(k_i * s_i).
          const expected = pointScalars.reduce((acc, k, i) => Fr.add(acc, Fr.mul(k, scalars[i]!)), 0n);
          assert.equal(results[0], expected === 0n ? 'identity' : g1Hex(wasm, wasm.g1Mul(wasm.P1, expected)));
        },
      ),
      { numRuns: 25 },
    );
    // Each method for certain: one point, the fixed window up to 64, Pippenger from 65.
    for (const n of [1, 2, 64, 65, 130]) {
      const [pointScalars, scalars] = fc.sample(
        fc.tuple(
          fc.array(nonZeroScalar, { minLength: n, maxLength: n }),
          fc.array(scalar, { minLength: n, maxLength: n }),
        ),
        1,
      )[0]!;
      assertSame(
        onEach((curve) =>
          g1Hex(
            curve,
            curve.g1MultiScalarMul(
              pointScalars.map((k) => curve.g1Mul(curve.P1, k)),
              scalars,
            ),
          ),
        ),
        `${n} points`,
      );
    }
  });

  test('the identity among other points of a multi-scalar multiplication adds nothing', () => {
    // blst shares one inversion across its table of multiples: a point at infinity among the
    // others once gave a wrong sum on the native backend.
    for (const position of [0, 1, 2]) {
      const results = onEach((curve) => {
        const points = [curve.g1Mul(curve.P1, 5n), curve.g1Mul(curve.P1, 7n)];
        points.splice(position, 0, curve.g1Negate(curve.g1MultiScalarMul([], [])));
        return g1Hex(curve, curve.g1MultiScalarMul(points, [2n, 3n, 4n]));
      });
      assertSame(results, `the identity at ${position}`);
      const expected = [5n, 7n].toSpliced(position, 0, 0n).reduce((acc, k, i) => acc + k * BigInt(i + 2), 0n);
      assert.equal(results[0], g1Hex(wasm, wasm.g1Mul(wasm.P1, expected)));
    }
  });

  test('multi-scalar multiplications over kept points (the generators’ tables) give the same octets', () => {
    // Points made once and kept, as the generators are; then sums mixing kept and fresh points
    // (a proof's D among the generators), more kept than fresh so the kept tables are used.
    const keptScalars = fc.sample(nonZeroScalar, 70);
    const kept = backends.map((curve) => {
      const points = keptScalars.map((k) => curve.g1Mul(curve.P1, k));
      curve.keepForMultiScalarMul(points);
      return points;
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 70 }).chain((n) =>
          fc.tuple(
            fc.shuffledSubarray([...keptScalars.keys()], { minLength: n, maxLength: n }),
            fc.array(fc.oneof(nonZeroScalar, fc.constant(0n)), {
              minLength: 0,
              maxLength: Math.floor(n / 2),
            }),
            fc.array(scalar, { minLength: n + 35, maxLength: n + 35 }),
          ),
        ),
        ([chosen, fresh, scalars]) => {
          const results = backends.map((curve, b) => {
            // A fresh point of 0 is the identity, in the table as anywhere else.
            const freshPoints = fresh.map((k) =>
              k === 0n ? curve.g1Negate(curve.g1MultiScalarMul([], [])) : curve.g1Mul(curve.P1, k),
            );
            const points = [...freshPoints, ...chosen.map((i) => kept[b]![i]!)];
            const sum = curve.g1MultiScalarMul(points, scalars.slice(0, points.length));
            return curve.isIdentityG1(sum) ? 'identity' : g1Hex(curve, sum);
          });
          assertSame(results, `${chosen.length} kept and ${fresh.length} fresh points`);
          const expected = [...fresh, ...chosen.map((i) => keptScalars[i]!)].reduce(
            (acc, k, i) => Fr.add(acc, Fr.mul(k, scalars[i]!)),
            0n,
          );
          assert.equal(results[0], expected === 0n ? 'identity' : g1Hex(wasm, wasm.g1Mul(wasm.P1, expected)));
        },
      ),
      { numRuns: 30 },
    );
  });

  test('the identity is handled alike: in sums, negated, encoded and decoded', () => {
    const results = onEach((curve) => {
      const identity = curve.g1Mul(curve.P1, 0n);
      const minusP1 = curve.g1Negate(curve.P1);
      return {
        identity: curve.isIdentityG1(identity),
        negatedIdentity: curve.isIdentityG1(curve.g1Negate(identity)),
        sumWithIdentity: g1Hex(curve, curve.g1MultiScalarMul([identity, curve.P1], [5n, 1n])),
        cancelled: curve.isIdentityG1(curve.g1MultiScalarMul([curve.P1, minusP1], [7n, 7n])),
        empty: curve.isIdentityG1(curve.g1MultiScalarMul([], [])),
        encodedIdentity: toHex(curve.g1ToBytes(identity)),
        decodedIdentity: curve.g1FromBytes(curve.g1ToBytes(identity)),
        minusP1: g1Hex(curve, minusP1),
      };
    });
    assertSame(results, 'identity handling');
    assert.equal(results[0]!.identity, true);
    assert.equal(results[0]!.sumWithIdentity, toHex(P1_BYTES));
    assert.equal(results[0]!.encodedIdentity, `c0${'00'.repeat(47)}`);
    assert.equal(results[0]!.decodedIdentity, undefined);
  });

  test('decoding accepts and refuses the same encodings, checked or not', () => {
    const g1 = g1Encodings();
    const g2 = g2Encodings();
    const random = fc.sample(fc.uint8Array({ minLength: 48, maxLength: 48 }), 200);
    for (const { name, bytes } of [
      ...g1.valid,
      ...g1.invalid,
      ...random.map((bytes) => ({ name: toHex(bytes), bytes })),
    ]) {
      assertSame(
        onEach((curve) => curve.g1FromBytes(bytes) !== undefined),
        `G1 ${name}`,
      );
      assertSame(
        onEach((curve) => {
          const point = curve.g1FromCheckedBytes(bytes);
          return point === undefined ? undefined : g1Hex(curve, point);
        }),
        `G1 unchecked ${name}`,
      );
    }
    for (const { name, bytes } of [...g2.valid, ...g2.invalid]) {
      assertSame(
        onEach((curve) => curve.g2FromBytes(bytes) !== undefined),
        `G2 ${name}`,
      );
    }
    // The check that g1FromCheckedBytes skips is the subgroup one, and only that one.
    const outside = g1.invalid.find(({ name }) => name === 'a curve point outside the subgroup')!;
    assert.ok(blst.g1FromCheckedBytes(outside.bytes));
    assert.equal(blst.g1FromBytes(outside.bytes), undefined);
  });

  test('hash-to-G1 with the caller’s DST matches @noble/curves', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.oneof(fc.constant(GENERATOR_DST), fc.uint8Array({ minLength: 1, maxLength: 255 })),
        (message, dst) => {
          const expected = toHex(bls12_381.G1.hashToCurve(message, { DST: dst }).toBytes());
          assert.equal(g1Hex(blst, blst.hashToG1(message, dst)), expected);
        },
      ),
      { numRuns: 40 },
    );
  });

  test('hash-to-G1 reproduces RFC 9380’s BLS12381G1_XMD:SHA-256_SSWU_RO_ vectors (blst’s copy)', (t) => {
    const require = createRequire(import.meta.url);
    let file: string;
    try {
      file = path.join(
        path.dirname(require.resolve('c-kzg/package.json')),
        'deps/blst/bindings/vectors/hash_to_curve/BLS12381G1_XMD_SHA-256_SSWU_RO_.json',
      );
    } catch {
      t.skip('the c-kzg package is not installed');
      return;
    }
    if (!existsSync(file)) return t.skip(`${file} is missing`);
    const suite = JSON.parse(readFileSync(file, 'utf8')) as {
      dst: string;
      vectors: Array<{ msg: string; P: { x: string; y: string } }>;
    };
    assert.ok(suite.vectors.length >= 5);
    const dst = new TextEncoder().encode(suite.dst);
    for (const vector of suite.vectors) {
      const expected = bls12_381.G1.Point.fromAffine({
        x: BigInt(vector.P.x),
        y: BigInt(vector.P.y),
      }).toBytes();
      for (const curve of backends) {
        assert.equal(
          g1Hex(curve, curve.hashToG1(new TextEncoder().encode(vector.msg), dst)),
          toHex(expected),
        );
      }
    }
  });

  test('pairing products agree: e(aP1, bBP2) * e(-ab P1, BP2) is one, and not when perturbed', () => {
    fc.assert(
      fc.property(nonZeroScalar, nonZeroScalar, fc.boolean(), (a, b, perturb) => {
        const results = onEach((curve) => {
          const key = curve.prepareG2(curve.g2BaseMul(b));
          try {
            const withBase = curve.g1Mul(curve.P1, Fr.add(Fr.neg(Fr.mul(a, b)), perturb ? 1n : 0n));
            return curve.pairingProductIsIdentity(curve.g1Mul(curve.P1, a), key, withBase);
          } finally {
            curve.releaseG2(key);
          }
        });
        assert.deepEqual(
          results,
          backends.map(() => !perturb),
        );
      }),
      { numRuns: 12 },
    );
    // An identity on the G1 side contributes e(O, Q) = 1 on both.
    const identityCases = onEach((curve) => {
      const identity = curve.g1Mul(curve.P1, 0n);
      const key = curve.prepareG2(curve.g2BaseMul(3n));
      const answers = [
        curve.pairingProductIsIdentity(identity, key, identity),
        curve.pairingProductIsIdentity(identity, key, curve.P1),
        curve.pairingProductIsIdentity(curve.P1, key, identity),
      ];
      curve.releaseG2(key);
      return answers;
    });
    assertSame(identityCases, 'pairings with the identity');
    assert.deepEqual(identityCases[0], [true, false, false]);
  });

  test('the addon refuses arguments of the wrong shape with a TypeError, and does not crash', () => {
    const addon = createRequire(import.meta.url)(NATIVE_ADDON_PATH) as Record<
      string,
      (...args: unknown[]) => unknown
    >;
    const point = new Uint8Array(96);
    assert.throws(() => addon['g1Mul']!(new Uint8Array(95), new Uint8Array(32)), TypeError);
    assert.throws(() => addon['g1Mul']!(point, new Uint8Array(31)), TypeError);
    assert.throws(() => addon['g1Mul']!(point), TypeError);
    assert.throws(() => addon['g1Mul']!('text', new Uint8Array(32)), TypeError);
    assert.throws(() => addon['g1MultiScalarMul']!(new Uint8Array(192), new Uint8Array(32)), TypeError);
    assert.throws(() => addon['g1MultiScalarMul']!(new Uint8Array(100), new Uint8Array(32)), TypeError);
    assert.throws(() => addon['g1Uncompress']!(new Uint16Array(24), true), TypeError);
    assert.throws(() => addon['g1Uncompress']!(new Uint8Array(48), 'yes'), TypeError);
    assert.throws(() => addon['hashToG1']!(new Uint8Array(1), new Uint8Array(0)), TypeError);
    assert.throws(() => addon['hashToG1']!(new Uint8Array(1), new Uint8Array(256)), TypeError);
    assert.throws(() => addon['pairingProductIsOne']!([point], []), TypeError);
    assert.throws(() => addon['pairingProductIsOne']!([point], [new Uint8Array(10)]), TypeError);
    assert.equal(addon['g1Uncompress']!(new Uint8Array(47), true), null);
    // Views at odd offsets into a larger buffer are read as well as whole arrays.
    const shifted = new Uint8Array(49);
    shifted.set(P1_BYTES, 1);
    const decoded = addon['g1Uncompress']!(shifted.subarray(1), true) as Uint8Array;
    const inside = new Uint8Array(97);
    inside.set(decoded, 1);
    assert.equal(toHex(addon['g1Compress']!(inside.subarray(1)) as Uint8Array), toHex(P1_BYTES));
  });

  test('worker threads load the addon and compute what the main thread does', async () => {
    const k = 0x1234567890abcdefn;
    const expected = g1Hex(blst, blst.g1Mul(blst.P1, k));
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      import(workerData.module).then(({ loadNativeCurve }) => {
        const loaded = loadNativeCurve();
        if (!loaded.ok) return parentPort.postMessage({ error: loaded.reason });
        const curve = loaded.backend;
        const point = curve.g1Mul(curve.P1, BigInt(workerData.k));
        parentPort.postMessage({ hex: Buffer.from(curve.g1ToBytes(point)).toString('hex') });
      }, (error) => parentPort.postMessage({ error: String(error) }));
    `;
    const module = new URL('../../src/bbs/curve-native.ts', import.meta.url).href;
    const answers = await Promise.all(
      [0, 1, 2].map(
        () =>
          new Promise<{ hex?: string; error?: string }>((resolve, reject) => {
            const worker = new Worker(source, { eval: true, workerData: { module, k: k.toString() } });
            worker.once('message', (message) => {
              resolve(message);
              void worker.terminate();
            });
            worker.once('error', reject);
          }),
      ),
    );
    for (const answer of answers) assert.deepEqual(answer, { hex: expected });
  });
});
