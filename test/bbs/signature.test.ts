import assert from 'node:assert/strict';
import { test } from 'node:test';
import { g1MultiScalarMul, g1ToBytes, P1 } from '../../src/bbs/curve.ts';
import { calculateDomain } from '../../src/bbs/domain.ts';
import { messageGenerators } from '../../src/bbs/generators.ts';
import { messagesToScalars } from '../../src/bbs/hash-to-scalar.ts';
import { secretKeyToScalar } from '../../src/bbs/keys.ts';
import { coreSign, coreVerify } from '../../src/bbs/sign.ts';
import { fixtureNames, hex, readFixture, type SignatureFixture, toHex } from './fixtures.ts';

const names = fixtureNames('signature');

test('there are ten signature fixtures, valid and invalid ones', () => {
  assert.equal(names.length, 10);
  const fixtures = names.map((name) => readFixture<SignatureFixture>(name));
  assert.equal(fixtures.filter((fixture) => fixture.result.valid).length, 3);
});

for (const name of names) {
  const fixture = readFixture<SignatureFixture>(name);
  test(`${name}: ${fixture.caseName}`, () => {
    const publicKey = hex(fixture.signerKeyPair.publicKey);
    const header = hex(fixture.header);
    const scalars = messagesToScalars(fixture.messages.map(hex));
    const signature = hex(fixture.signature);
    assert.equal(coreVerify(publicKey, signature, header, scalars), fixture.result.valid);
    if (fixture.result.valid) {
      // The traced intermediate values (of the signer, so only valid cases match the inputs):
      // domain, and B = P1 + Q_1 * domain + sum(H_i * msg_i).
      const generators = messageGenerators(scalars.length);
      const domain = calculateDomain(publicKey, generators, header);
      assert.equal(domain.toString(16).padStart(64, '0'), fixture.trace.domain);
      const b = g1MultiScalarMul([P1, generators.q1, ...generators.h], [1n, domain, ...scalars]);
      assert.equal(toHex(g1ToBytes(b)), fixture.trace.B);
      const secretKey = secretKeyToScalar(hex(fixture.signerKeyPair.secretKey));
      assert.equal(toHex(coreSign(secretKey, publicKey, header, scalars)), fixture.signature);
    }
  });
}
