import {
  createLabelMapFunction,
  hashCanonizedProof,
  hashMandatory,
  labelReplacementCanonicalizeJsonLd,
} from '@digitalbazaar/di-sd-primitives';
import type { Bbs2023Deps } from './base-proof.ts';
import { ProofValueError, parseDerivedProofValue } from './proof-value.ts';
import { type ProofCheck, proofFailure, type SecuredDocument, unsecured, utf8 } from './shared.ts';

/**
 * Verifies a derived proof (§3.3.4 createVerifyData and §3.4.7 "Verify Derived Proof"), with
 * the presentation header the verifier expects: a derived proof made for another verifier
 * does not verify here.
 */
export async function verifyDerivedProof(
  document: SecuredDocument,
  issuerPublicKey: Uint8Array,
  expectedPresentationHeader: Uint8Array,
  deps: Bbs2023Deps,
): Promise<ProofCheck> {
  const proof = document.proof;
  if (proof?.type !== 'DataIntegrityProof' || proof.cryptosuite !== 'bbs-2023') {
    return proofFailure('the proof is not a bbs-2023 DataIntegrityProof');
  }
  let value: ReturnType<typeof parseDerivedProofValue>;
  try {
    value = parseDerivedProofValue(proof.proofValue);
  } catch (error) {
    if (error instanceof ProofValueError)
      return proofFailure(`the derived proof is malformed: ${error.message}`);
    throw error;
  }
  if (!Buffer.from(value.presentationHeader).equals(Buffer.from(expectedPresentationHeader))) {
    return proofFailure('the presentation header is not the expected one');
  }
  const credential = unsecured(document);
  const { proofValue: _value, ...proofOptions } = proof;
  const [proofHash, nquads] = await Promise.all([
    hashCanonizedProof({ document: credential, proof: proofOptions, options: deps.jsonLd }),
    labelReplacementCanonicalizeJsonLd({
      document: credential,
      labelMapFactoryFunction: createLabelMapFunction({ labelMap: value.labelMap }),
      options: deps.jsonLd,
    }),
  ]);
  const mandatoryIndexes = new Set(value.mandatoryIndexes);
  const mandatory = nquads.filter((_, i) => mandatoryIndexes.has(i));
  const disclosed = nquads.filter((_, i) => !mandatoryIndexes.has(i));
  if (disclosed.length !== value.selectiveIndexes.length) {
    return proofFailure('the number of disclosed statements does not match the proof');
  }
  const { mandatoryHash } = await hashMandatory({ mandatory });
  const verified = await deps.bbs.verifyProof({
    publicKey: issuerPublicKey,
    proof: value.bbsProof,
    header: new Uint8Array(Buffer.concat([proofHash, mandatoryHash])),
    presentationHeader: value.presentationHeader,
    disclosedMessages: disclosed.map(utf8),
    disclosedMessageIndexes: value.selectiveIndexes,
  });
  return verified
    ? { ok: true }
    : proofFailure('the BBS proof does not verify over the disclosed statements');
}
