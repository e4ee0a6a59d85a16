import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fastBbs } from '../../../src/bbs/index.ts';
import { stockBbs } from '../../../src/bbs/stock.ts';
import { verifyBaseProof } from '../../../src/formats/ldp-vc/bbs-2023/base-proof.ts';
import { verifyDerivedProof } from '../../../src/formats/ldp-vc/bbs-2023/derived-proof.ts';
import { deriveDisclosure, planDisclosure } from '../../../src/formats/ldp-vc/bbs-2023/disclosure.ts';
import {
  parseBaseProofValue,
  serializeBaseProofValue,
} from '../../../src/formats/ldp-vc/bbs-2023/proof-value.ts';
import { readVector, vectorJsonLd, vectorPresentationHeader, vectorPublicKey } from './vectors.ts';

/** Every path to a string or number leaf of a JSON value, as a list of keys. */
function leaves(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value === 'string' || typeof value === 'number') return [at];
  if (Array.isArray(value)) return value.flatMap((item, i) => leaves(item, [...at, i]));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => leaves(item, [...at, key]));
  return [];
}

function changedAt(document: object, at: Array<string | number>): object {
  const copy = structuredClone(document) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of at.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = at.at(-1)!;
  const old = parent[last];
  parent[last] = typeof old === 'number' ? old + 1 : `${old}x`;
  return copy;
}

/** A planned disclosure holds the spec example's reveal document, label map and indexes. */
function assertSpecDisclosureData(plan: Awaited<ReturnType<typeof planDisclosure>>, example: string) {
  const disclosure = readVector(`${example}derivedDisclosureData.json`);
  const groups = readVector(`${example}derivedGroupIndexes.json`);
  assert.deepEqual(plan.revealDocument, readVector(`${example}derivedUnsignedReveal.json`));
  assert.deepEqual([...plan.verifierLabelMap], disclosure.labelMap.value);
  assert.deepEqual(plan.mandatoryIndexes, disclosure.mandatoryIndexes);
  assert.deepEqual(plan.selectiveIndexes, disclosure.adjSelectiveIndexes);
  assert.deepEqual(plan.revealedIndexes, groups.combinedIndexes);
}

const SUITES = { 'Coffer BBS core': fastBbs, 'stock BBS': stockBbs };

for (const [suiteName, bbs] of Object.entries(SUITES))
  for (const example of ['', 'prc/']) {
    const name = example ? 'enhanced (prc)' : 'baseline (windsurf)';
    const deps = { bbs, jsonLd: vectorJsonLd() };
    describe(`W3C bbs-2023 vectors: ${name} example, ${suiteName}`, () => {
      const signed = readVector(`${example}addSignedSDBase.json`);
      const publicKey = vectorPublicKey();

      it("the spec's signed base document passes base-proof verification", async () => {
        const result = await verifyBaseProof(signed, publicKey, deps, { prepare: true });
        assert.equal(result.ok, true);
        // Only Coffer's core returns the signature's B, so only it prepares statements.
        assert.equal(result.ok && result.prepared !== undefined, bbs === fastBbs);
      });

      if (bbs === fastBbs) {
        it("planning the spec's disclosure from the prepared statements gives the spec's data too", async () => {
          const check = await verifyBaseProof(signed, publicKey, deps, { prepare: true });
          assert.ok(check.ok && check.prepared);
          const selective = readVector(example ? 'prCredSelective.json' : 'windSelective.json');
          assertSpecDisclosureData(await planDisclosure(signed, selective, deps, check.prepared), example);
          // The derived proof made from them verifies on the stock BBS library.
          const header = Uint8Array.of(7, 7);
          const { credential } = await deriveDisclosure(signed, selective, header, deps, check.prepared);
          const stockDeps = { bbs: stockBbs, jsonLd: deps.jsonLd };
          assert.deepEqual(await verifyDerivedProof(credential, publicKey, header, stockDeps), { ok: true });
        });
      }

      it('changing any statement of the credential or the proof options makes it fail', async () => {
        const { proof, ...credential } = signed;
        const paths = [
          ...leaves(credential).filter((at) => at[0] !== '@context'),
          ...leaves(proof)
            .filter((at) => at[0] !== 'proofValue')
            .map((at) => ['proof', ...at]),
        ];
        assert.ok(paths.length > 10, 'the example has many statements');
        for (const at of paths) {
          const result = await verifyBaseProof(changedAt(signed, at) as typeof signed, publicKey, deps).catch(
            (error: Error) => ({ ok: false, reason: error.message }),
          );
          assert.equal(result.ok, false, `a change at /${at.join('/')} went unnoticed`);
        }
      });

      it('a flipped bit in the BBS signature fails the signature check itself', async () => {
        const value = parseBaseProofValue(signed.proof.proofValue);
        value.bbsSignature[40]! ^= 1;
        const forged = { ...signed, proof: { ...signed.proof, proofValue: serializeBaseProofValue(value) } };
        const result = await verifyBaseProof(forged, publicKey, deps);
        assert.deepEqual(result, {
          ok: false,
          reason: 'the BBS signature does not verify over the statements',
        });
      });

      it("another issuer's key is refused even though the signature is intact", async () => {
        const other = Buffer.from(publicKey);
        other[95]! ^= 1;
        const result = await verifyBaseProof(signed, other, deps);
        assert.equal(result.ok, false);
        assert.match((result as { reason: string }).reason, /not the issuer's key/);
      });

      it("planning the spec's disclosure reproduces its reveal document, label map and indexes", async () => {
        const selective = readVector(example ? 'prCredSelective.json' : 'windSelective.json');
        assertSpecDisclosureData(await planDisclosure(signed, selective, deps), example);
      });

      it("the spec's derived document verifies with its presentation header, and not with another", async () => {
        const derived = readVector(`${example}derivedRevealDocument.json`);
        const header = vectorPresentationHeader(`${example}derivedDisclosureData.json`);
        assert.deepEqual(await verifyDerivedProof(derived, publicKey, header, deps), { ok: true });
        const other = await verifyDerivedProof(derived, publicKey, Uint8Array.of(1, 2, 3), deps);
        assert.equal(other.ok, false);
      });

      it('a disclosure derived from the spec base verifies, and a changed disclosed value does not', async () => {
        const selective = readVector(example ? 'prCredSelective.json' : 'windSelective.json');
        const header = Uint8Array.of(0xc0, 0xff, 0xee);
        const { credential } = await deriveDisclosure(signed, selective, header, deps);
        assert.deepEqual(await verifyDerivedProof(credential, publicKey, header, deps), { ok: true });
        const tampered = changedAt(credential, [
          'credentialSubject',
          example ? 'birthCountry' : 'sailNumber',
        ]);
        const result = await verifyDerivedProof(tampered as typeof credential, publicKey, header, deps);
        assert.equal(result.ok, false);
      });
    });
  }
