import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Fr } from '../../src/bbs/ciphersuite.ts';
import { g1MultiScalarMul } from '../../src/bbs/curve.ts';
import { fastBbs } from '../../src/bbs/index.ts';
import { octetsToSignature, signatureToOctets } from '../../src/bbs/serialize.ts';
import { fixtureNames, hex, readFixture, type SignatureFixture, toHex } from './fixtures.ts';

const utf8 = (text: string) => new TextEncoder().encode(text);

async function signedBy(keys: { secretKey: Uint8Array; publicKey: Uint8Array }, tag: string) {
  const header = utf8(`header ${tag}`);
  const messages = [utf8(`first ${tag}`), utf8(`second ${tag}`), utf8(`third ${tag}`)];
  const signature = await fastBbs.sign({ ...keys, header, messages });
  return { publicKey: keys.publicKey, signature, header, messages };
}

const verifyBatch = (batch: Parameters<NonNullable<typeof fastBbs.verifySignaturesKeepingBase>>[0]) =>
  fastBbs.verifySignaturesKeepingBase!(batch);

test('the IETF signature fixtures checked in one batch answer as each checked alone, B included', async () => {
  const fixtures = fixtureNames('signature').map((name) => readFixture<SignatureFixture>(name));
  const results = await verifyBatch(
    fixtures.map((fixture) => ({
      publicKey: hex(fixture.signerKeyPair.publicKey),
      signature: hex(fixture.signature),
      header: hex(fixture.header),
      messages: fixture.messages.map(hex),
    })),
  );
  fixtures.forEach((fixture, i) => {
    assert.equal(results[i] !== undefined, fixture.result.valid, fixture.caseName);
    if (fixture.result.valid) assert.equal(toHex(results[i]!), fixture.trace.B, fixture.caseName);
  });
});

test('one altered credential in a batch fails alone; the others under the same and another key pass', async () => {
  const issuer = await fastBbs.generateKeyPair();
  const other = await fastBbs.generateKeyPair();
  const batch = await Promise.all([
    signedBy(issuer, 'a'),
    signedBy(issuer, 'b'),
    signedBy(other, 'c'),
    signedBy(issuer, 'd'),
  ]);
  batch[1] = { ...batch[1]!, messages: [utf8('first b'), utf8('second b, altered'), utf8('third b')] };
  const results = await verifyBatch(batch);
  assert.deepEqual(
    results.map((base) => base !== undefined),
    [true, false, true, true],
  );
  for (const [i, signed] of batch.entries()) {
    if (i === 1) continue;
    const alone = await fastBbs.verifySignatureKeepingBase!(signed);
    assert.deepEqual(results[i], alone);
  }
});

test('two forged signatures whose errors cancel in an unweighted product are both refused', async () => {
  // (A + X, e) and (A - X, e) over the messages of a valid (A, e): each check fails, but the plain
  // product of the two checks equals the valid check squared. Only random weights catch it.
  const issuer = await fastBbs.generateKeyPair();
  const valid = await signedBy(issuer, 'cancel');
  const { a, e } = octetsToSignature(valid.signature)!;
  const x = g1MultiScalarMul([a], [7n]);
  const plus = signatureToOctets({ a: g1MultiScalarMul([a, x], [1n, 1n]), e });
  const minus = signatureToOctets({ a: g1MultiScalarMul([a, x], [1n, Fr.neg(1n)]), e });
  const results = await verifyBatch([
    { ...valid, signature: plus },
    { ...valid, signature: minus },
  ]);
  assert.deepEqual(results, [undefined, undefined]);
  assert.equal(await fastBbs.verifySignature({ ...valid, signature: plus }), false);
});

test('malformed signatures and keys in a batch fail without failing the rest; an empty batch is empty', async () => {
  const issuer = await fastBbs.generateKeyPair();
  const valid = await signedBy(issuer, 'ok');
  const results = await verifyBatch([
    { ...valid, signature: valid.signature.subarray(1) },
    valid,
    { ...valid, publicKey: new Uint8Array(96) },
    { ...valid, signature: new Uint8Array(80) },
  ]);
  assert.deepEqual(
    results.map((base) => base !== undefined),
    [false, true, false, false],
  );
  assert.deepEqual(await verifyBatch([]), []);
  await assert.rejects(verifyBatch([{ ...valid, messages: ['text' as unknown as Uint8Array] }]), TypeError);
});

test('a batch larger than one pairing product takes is answered whole', async () => {
  const issuer = await fastBbs.generateKeyPair();
  const batch = await Promise.all(Array.from({ length: 35 }, (_, i) => signedBy(issuer, `many ${i}`)));
  batch[33] = { ...batch[33]!, header: utf8('another header') };
  const results = await verifyBatch(batch);
  assert.equal(results.length, 35);
  assert.deepEqual(
    results.flatMap((base, i) => (base === undefined ? [i] : [])),
    [33],
  );
});
