import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { createPooledOperations } from '../../../src/formats/ldp-vc/bbs-2023/crypto-pool.ts';
import {
  parseBaseProofValue,
  serializeBaseProofValue,
} from '../../../src/formats/ldp-vc/bbs-2023/proof-value.ts';
import { createContextRegistry } from '../../../src/formats/ldp-vc/contexts/document-loader.ts';
import {
  CITIZENSHIP_V4RC1,
  readVector,
  VECTORS,
  vectorPresentationHeader,
  vectorPublicKey,
} from './vectors.ts';

test('the crypto pool finishes tasks in the order they arrived, so no request waits behind later ones', async (t) => {
  const pool = createPooledOperations({ threads: 1, contexts: createContextRegistry(async () => undefined) });
  t.after(() => pool.close());
  const signed = readVector('addSignedSDBase.json');
  const publicKey = vectorPublicKey();
  const first = await pool.verifyBaseProof(signed, publicKey, { prepare: true });
  assert.equal(
    first.ok && first.prepared?.version,
    1,
    'a valid check in a worker brings its prepared statements',
  );

  const finished: number[] = [];
  await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      pool.verifyBaseProof(signed, publicKey).then((result) => {
        assert.equal(result.ok, true);
        finished.push(i);
      }),
    ),
  );
  assert.deepEqual(
    finished,
    Array.from({ length: 12 }, (_, i) => i),
  );
});

test('checks that arrive together are answered each on its own: a forgery, an unknown and a registered context among valid ones', async (t) => {
  const citizenship = JSON.parse(
    readFileSync(path.join(VECTORS, 'contexts/citizenship-v4rc1.jsonld'), 'utf8'),
  ) as object;
  const pool = createPooledOperations({
    threads: 1,
    contexts: createContextRegistry(async (url) => (url === CITIZENSHIP_V4RC1 ? citizenship : undefined)),
  });
  t.after(() => pool.close());
  const signed = readVector('addSignedSDBase.json');
  const enhanced = readVector('prc/addSignedSDBase.json');
  const publicKey = vectorPublicKey();
  const base = parseBaseProofValue(signed.proof.proofValue);
  base.bbsSignature[79]! ^= 1;
  const forged = { ...signed, proof: { ...signed.proof, proofValue: serializeBaseProofValue(base) } };
  const unknown = { ...signed, '@context': [...signed['@context'], 'https://example.org/unknown-context'] };
  const wrongKey = new Uint8Array(publicKey);
  wrongKey[5]! ^= 1;

  // The first request takes the only thread; the others wait and go to it as one batch.
  const checks = await Promise.all([
    pool.verifyBaseProof(signed, publicKey),
    pool.verifyBaseProof(signed, publicKey, { prepare: true }),
    pool.verifyBaseProof(forged, publicKey),
    pool.verifyBaseProof(unknown, publicKey),
    pool.verifyBaseProof(enhanced, publicKey, { prepare: true }),
    pool.verifyBaseProof(signed, wrongKey),
    pool.deriveDisclosure(signed, ['/credentialSubject/sailNumber'], new Uint8Array([1])),
    pool.verifyBaseProof(signed, publicKey),
  ]);
  const [plain, prepared, forgery, unknownContext, registered, otherKey, derived, last] = checks;
  assert.deepEqual(plain, { ok: true });
  assert.equal(prepared.ok && prepared.prepared?.version, 1);
  assert.deepEqual(forgery, { ok: false, reason: 'the BBS signature does not verify over the statements' });
  assert.equal(unknownContext.ok, false);
  assert.match(
    !unknownContext.ok ? unknownContext.reason : '',
    /unknown-context, which this service does not know/,
  );
  assert.equal(
    registered.ok && registered.prepared?.version,
    1,
    'a context found in the registry is fetched and the check run again',
  );
  assert.equal(otherKey.ok, false);
  assert.ok(derived.credential.proof.proofValue, 'a derivation waiting among the checks is served too');
  assert.deepEqual(last, { ok: true });
});

test("a verifier's derived-proof checks run on the pool: the W3C vectors' derived documents, a registered and an unknown context", async (t) => {
  const citizenship = JSON.parse(
    readFileSync(path.join(VECTORS, 'contexts/citizenship-v4rc1.jsonld'), 'utf8'),
  ) as object;
  const pool = createPooledOperations({
    threads: 1,
    contexts: createContextRegistry(async (url) => (url === CITIZENSHIP_V4RC1 ? citizenship : undefined)),
  });
  t.after(() => pool.close());
  const publicKey = vectorPublicKey();
  const baseline = readVector('derivedRevealDocument.json');
  const enhanced = readVector('prc/derivedRevealDocument.json');
  const unknown = {
    ...baseline,
    '@context': [...baseline['@context'], 'https://example.org/unknown-context'],
  };
  const [plain, registered, otherHeader, unknownContext] = await Promise.all([
    pool.verifyDerivedProof(baseline, publicKey, vectorPresentationHeader()),
    pool.verifyDerivedProof(enhanced, publicKey, vectorPresentationHeader('prc/derivedDisclosureData.json')),
    pool.verifyDerivedProof(baseline, publicKey, Uint8Array.of(1)),
    pool.verifyDerivedProof(unknown, publicKey, vectorPresentationHeader()),
  ]);
  assert.deepEqual(plain, { ok: true });
  assert.deepEqual(
    registered,
    { ok: true },
    'a context found in the registry is fetched and the check run again',
  );
  assert.deepEqual(otherHeader, { ok: false, reason: 'the presentation header is not the expected one' });
  assert.match(
    !unknownContext.ok ? unknownContext.reason : '',
    /unknown-context, which this service does not know/,
  );
});
