import assert from 'node:assert/strict';
import { test } from 'node:test';
import { messagesToScalars } from '../../src/bbs/hash-to-scalar.ts';
import { i2osp } from '../../src/bbs/octets.ts';
import { coreProofGen, coreProofVerify } from '../../src/bbs/proof.ts';
import { mockedRandomScalars } from '../../src/bbs/random-scalars.ts';
import { coreVerifyWithBase } from '../../src/bbs/sign.ts';
import {
  fixtureNames,
  hex,
  type MockedRngFixture,
  type ProofFixture,
  readFixture,
  toHex,
} from './fixtures.ts';

const names = fixtureNames('proof');
const rng = readFixture<MockedRngFixture>('mockedRng.json');
const mocked = mockedRandomScalars(hex(rng.seed), hex(rng.dst));
const scalarHex = (scalar: bigint) => toHex(i2osp(scalar, 32));

test('there are fifteen proof fixtures, valid and invalid ones', () => {
  assert.equal(names.length, 15);
  const fixtures = names.map((name) => readFixture<ProofFixture>(name));
  assert.equal(fixtures.filter((fixture) => fixture.result.valid).length, 5);
});

for (const name of names) {
  const fixture = readFixture<ProofFixture>(name);
  test(`${name}: ${fixture.caseName}`, () => {
    const publicKey = hex(fixture.signerPublicKey);
    const header = hex(fixture.header);
    const presentationHeader = hex(fixture.presentationHeader);
    const scalars = messagesToScalars(fixture.messages.map(hex));
    const indexes = fixture.disclosedIndexes;
    const verified = coreProofVerify({
      publicKey,
      proof: hex(fixture.proof),
      header,
      presentationHeader,
      disclosedScalars: indexes.map((i) => scalars[i]!),
      disclosedIndexes: indexes,
    });
    assert.equal(verified, fixture.result.valid);
    if (!fixture.result.valid) return;

    // The mocked random scalars of the trace, then the proof byte for byte.
    const undisclosedCount = scalars.length - indexes.length;
    const random = fixture.trace.random_scalars;
    assert.deepEqual(mocked(5 + undisclosedCount).map(scalarHex), [
      random.r1,
      random.r2,
      random.e_tilde,
      random.r1_tilde,
      random.r3_tilde,
      ...random.m_tilde_scalars,
    ]);
    const input = {
      publicKey,
      signature: hex(fixture.signature),
      header,
      presentationHeader,
      messageScalars: scalars,
      disclosedIndexes: indexes,
      randomScalars: mocked,
    };
    assert.equal(toHex(coreProofGen(input)), fixture.proof);

    // The same proof, byte for byte, from the signature's B kept when it was verified.
    const signatureBase = coreVerifyWithBase(publicKey, input.signature, header, scalars);
    assert.ok(signatureBase);
    assert.equal(toHex(coreProofGen({ ...input, signatureBase })), fixture.proof);
  });
}

test('a B that is not a point is refused, and a wrong B makes a proof that does not verify', () => {
  const fixture = readFixture<ProofFixture>(
    names.find((name) => readFixture<ProofFixture>(name).result.valid)!,
  );
  const scalars = messagesToScalars(fixture.messages.map(hex));
  const input = {
    publicKey: hex(fixture.signerPublicKey),
    signature: hex(fixture.signature),
    header: hex(fixture.header),
    presentationHeader: hex(fixture.presentationHeader),
    messageScalars: scalars,
    disclosedIndexes: fixture.disclosedIndexes,
    randomScalars: mocked,
  };
  assert.throws(() => coreProofGen({ ...input, signatureBase: new Uint8Array(48) }), /B does not decode/);
  // Another header gives another domain, so another B: a valid point, but not this signature's.
  const otherBase = coreVerifyWithBase(input.publicKey, input.signature, new Uint8Array([1]), scalars);
  assert.equal(otherBase, undefined, 'the signature does not verify under another header');
  const wrongBase = hex(fixture.proof).subarray(0, 48); // Abar of the proof: a valid G1 point
  const proof = coreProofGen({ ...input, signatureBase: wrongBase });
  const verified = coreProofVerify({
    publicKey: input.publicKey,
    proof,
    header: input.header,
    presentationHeader: input.presentationHeader,
    disclosedScalars: fixture.disclosedIndexes.map((i) => scalars[i]!),
    disclosedIndexes: fixture.disclosedIndexes,
  });
  assert.equal(verified, false);
});
