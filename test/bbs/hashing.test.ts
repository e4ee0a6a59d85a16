import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expand_message_xmd } from '@noble/curves/abstract/hash-to-curve.js';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { MOCK_RANDOM_SCALARS_DST } from '../../src/bbs/ciphersuite.ts';
import { expandMessageXmd, hashToScalar, messageToScalar } from '../../src/bbs/hash-to-scalar.ts';
import { i2osp } from '../../src/bbs/octets.ts';
import { mockedRandomScalars, secureRandomScalars } from '../../src/bbs/random-scalars.ts';
import { hex, type MockedRngFixture, readFixture, toHex } from './fixtures.ts';

const scalarHex = (scalar: bigint) => toHex(i2osp(scalar, 32));

test('expand_message_xmd matches an independent implementation for every output length class', () => {
  const dst = new TextEncoder().encode('QUUX-V01-CS02-with-expander-SHA256-128');
  for (const length of [1, 32, 33, 48, 64, 65, 128, 255, 480, 8160]) {
    for (const message of [new Uint8Array(), new TextEncoder().encode('abc'), new Uint8Array(200).fill(7)]) {
      assert.equal(
        toHex(expandMessageXmd(message, dst, length)),
        toHex(expand_message_xmd(message, dst, length, sha256)),
        `length ${length}, message of ${message.length} octets`,
      );
    }
  }
  assert.throws(() => expandMessageXmd(new Uint8Array(), dst, 8161), RangeError);
  assert.throws(() => expandMessageXmd(new Uint8Array(), new Uint8Array(256), 48), RangeError);
});

test('RFC 9380 expand_message_xmd(SHA-256) test vector', () => {
  const dst = new TextEncoder().encode('QUUX-V01-CS02-with-expander-SHA256-128');
  assert.equal(
    toHex(expandMessageXmd(new Uint8Array(), dst, 0x20)),
    '68a985b87eb6b46952128911f2a4412bbc302a9d759667f87f7a21d803f07235',
  );
});

test('hash_to_scalar reproduces the h2s fixture', () => {
  const fixture = readFixture<{ message: string; dst: string; scalar: string }>('h2s.json');
  assert.equal(scalarHex(hashToScalar(hex(fixture.message), hex(fixture.dst))), fixture.scalar);
});

test('MapMessageToScalarAsHash reproduces every fixture case, with the default DST too', () => {
  const fixture = readFixture<{ dst: string; cases: Array<{ message: string; scalar: string }> }>(
    'MapMessageToScalarAsHash.json',
  );
  assert.equal(fixture.cases.length, 10);
  for (const { message, scalar } of fixture.cases) {
    assert.equal(scalarHex(messageToScalar(hex(message), hex(fixture.dst))), scalar, message);
    assert.equal(scalarHex(messageToScalar(hex(message))), scalar, `${message} with the default DST`);
  }
});

test('mocked random scalars reproduce the mockedRng fixture', () => {
  const fixture = readFixture<MockedRngFixture>('mockedRng.json');
  assert.equal(toHex(MOCK_RANDOM_SCALARS_DST), fixture.dst);
  const scalars = mockedRandomScalars(hex(fixture.seed), hex(fixture.dst))(fixture.count);
  assert.deepEqual(scalars.map(scalarHex), fixture.mockedScalars);
});

test('secure random scalars are distinct and below r', () => {
  const scalars = secureRandomScalars(64);
  assert.equal(scalars.length, 64);
  assert.equal(new Set(scalars).size, 64);
  for (const scalar of scalars) assert.ok(scalar >= 0n && scalar < bls12_381.fields.Fr.ORDER);
});
