import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { g1FromBytes, g1ToBytes, g2FromBytes, g2ToBytes } from '../../src/bbs/curve.ts';
import { g1Encodings, g2Encodings } from './encodings.ts';
import { toHex } from './fixtures.ts';

function nobleAccepts(decode: () => { is0(): boolean }): boolean {
  try {
    return !decode().is0();
  } catch {
    return false;
  }
}

test('G1 decoding accepts exactly the valid non-identity subgroup points, as @noble/curves does', () => {
  const { valid, invalid } = g1Encodings();
  for (const { name, bytes } of valid) {
    const point = g1FromBytes(bytes);
    assert.ok(point, name);
    assert.equal(toHex(g1ToBytes(point)), toHex(bytes), `${name} re-encodes to the same bytes`);
    assert.ok(
      nobleAccepts(() => bls12_381.G1.Point.fromBytes(bytes)),
      `noble accepts ${name}`,
    );
  }
  for (const { name, bytes } of invalid) {
    assert.equal(g1FromBytes(bytes), undefined, name);
    assert.equal(
      nobleAccepts(() => bls12_381.G1.Point.fromBytes(bytes)),
      false,
      `noble rejects ${name}`,
    );
  }
  assert.equal(g1FromBytes(valid[0]!.bytes.subarray(1)), undefined, 'too short');
  assert.equal(g1FromBytes(Uint8Array.from([...valid[0]!.bytes, 0])), undefined, 'too long');
});

test('G2 decoding accepts exactly the valid non-identity subgroup points, as @noble/curves does', () => {
  const { valid, invalid } = g2Encodings();
  for (const { name, bytes } of valid) {
    const point = g2FromBytes(bytes);
    assert.ok(point, name);
    assert.equal(toHex(g2ToBytes(point)), toHex(bytes), `${name} re-encodes to the same bytes`);
  }
  for (const { name, bytes } of invalid) {
    assert.equal(g2FromBytes(bytes), undefined, name);
    assert.equal(
      nobleAccepts(() => bls12_381.G2.Point.fromBytes(bytes)),
      false,
      `noble rejects ${name}`,
    );
  }
  assert.equal(g2FromBytes(valid[0]!.bytes.subarray(0, 48)), undefined, 'a G1-sized input');
});
