import assert from 'node:assert/strict';
import { test } from 'node:test';
import { P1_BYTES } from '../../src/bbs/ciphersuite.ts';
import { g1ToBytes, P1 } from '../../src/bbs/curve.ts';
import { createGenerators, messageGenerators } from '../../src/bbs/generators.ts';
import { keyGen, secretKeyToScalar, skToPk } from '../../src/bbs/keys.ts';
import { i2osp } from '../../src/bbs/octets.ts';
import { hex, readFixture, toHex } from './fixtures.ts';

interface GeneratorsFixture {
  P1: string;
  Q1: string;
  MsgGenerators: string[];
}

interface KeyPairFixture {
  keyMaterial: string;
  keyInfo: string;
  keyDst: string;
  keyPair: { secretKey: string; publicKey: string };
}

test('P1 and the generators (Q_1, H_1..H_10) are reproduced', () => {
  const fixture = readFixture<GeneratorsFixture>('generators.json');
  assert.equal(toHex(P1_BYTES), fixture.P1);
  assert.equal(toHex(g1ToBytes(P1)), fixture.P1);
  const { points, encodings } = createGenerators(fixture.MsgGenerators.length + 1);
  const expected = [fixture.Q1, ...fixture.MsgGenerators];
  assert.deepEqual(encodings.map(toHex), expected);
  assert.deepEqual(
    points.map((point) => toHex(g1ToBytes(point))),
    expected,
  );
});

test('the generator cache extends: a longer sequence starts with the shorter one', () => {
  const three = createGenerators(3).encodings.map(toHex);
  const twenty = createGenerators(20).encodings.map(toHex);
  assert.equal(twenty.length, 20);
  assert.deepEqual(twenty.slice(0, 3), three);
  assert.equal(new Set(twenty).size, 20);
  const forFive = messageGenerators(5);
  assert.equal(forFive.h.length, 5);
  assert.equal(toHex(forFive.encoded), twenty.slice(0, 6).join(''));
});

test('KeyGen and SkToPk reproduce the key pair fixture', () => {
  const fixture = readFixture<KeyPairFixture>('keypair.json');
  const secretKey = keyGen(hex(fixture.keyMaterial), hex(fixture.keyInfo), hex(fixture.keyDst));
  assert.equal(toHex(i2osp(secretKey, 32)), fixture.keyPair.secretKey);
  assert.equal(toHex(skToPk(secretKey)), fixture.keyPair.publicKey);
  assert.equal(toHex(skToPk(secretKeyToScalar(hex(fixture.keyPair.secretKey)))), fixture.keyPair.publicKey);
  // The key DST is an input: another one gives another key.
  assert.notEqual(
    toHex(i2osp(keyGen(hex(fixture.keyMaterial), hex(fixture.keyInfo)), 32)),
    fixture.keyPair.secretKey,
  );
});

test('KeyGen rejects short key material; secret keys must be 32 non-zero octets', () => {
  assert.throws(() => keyGen(new Uint8Array(31)), RangeError);
  assert.throws(() => secretKeyToScalar(new Uint8Array(31)), RangeError);
  assert.throws(() => secretKeyToScalar(new Uint8Array(32)), RangeError);
});
