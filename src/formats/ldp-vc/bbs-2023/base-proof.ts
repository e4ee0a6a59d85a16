import { randomBytes } from 'node:crypto';
import {
  canonicalizeAndGroup,
  hashCanonizedProof,
  hashMandatory,
  type JsonLdOptions,
} from '@digitalbazaar/di-sd-primitives';
import type { BbsSuite } from '../../../bbs/index.ts';
import { shuffledLabelMapFunction } from './label-map.ts';
import { type PreparedStatements, proofValueDigest } from './prepared-statements.ts';
import { ProofValueError, parseBaseProofValue, serializeBaseProofValue } from './proof-value.ts';
import { proofFailure, type SecuredDocument, unsecured, utf8 } from './shared.ts';

export interface Bbs2023Deps {
  bbs: BbsSuite;
  jsonLd: JsonLdOptions;
}

/** A proof's options as signed: everything but the value (§3.3.2 "proof configuration"). */
export interface ProofOptions {
  type: 'DataIntegrityProof';
  cryptosuite: 'bbs-2023';
  verificationMethod: string;
  proofPurpose: string;
  created?: string;
  [option: string]: unknown;
}

/**
 * The base proof transformation and hashing (§3.4.2–3.4.4): the statements named by the
 * mandatory pointers are hashed into the BBS header, the others become the signed messages.
 */
async function baseSignatureInput(
  document: object,
  proof: object,
  hmacKey: Uint8Array,
  mandatoryPointers: string[],
  jsonLd: JsonLdOptions,
) {
  const [proofHash, grouped] = await Promise.all([
    hashCanonizedProof({ document, proof, options: jsonLd }),
    canonicalizeAndGroup({
      document,
      labelMapFactoryFunction: shuffledLabelMapFunction(hmacKey),
      groups: { mandatory: mandatoryPointers },
      options: jsonLd,
    }),
  ]);
  const { groups } = grouped;
  const { mandatoryHash } = await hashMandatory({ mandatory: [...groups.mandatory.matching.values()] });
  const header = Buffer.concat([proofHash, mandatoryHash]);
  const messages = [...groups.mandatory.nonMatching.values()].map(utf8);
  return { header: new Uint8Array(header), messages, grouped };
}

/** The statements a holder keeps for later disclosures (prepared-statements.ts). */
function prepareStatements(
  proofValue: unknown,
  grouped: Awaited<ReturnType<typeof canonicalizeAndGroup>>,
  signatureBase: Uint8Array,
): PreparedStatements {
  return {
    version: 1,
    proofValueDigest: proofValueDigest(proofValue),
    skolemized: grouped.skolemized.compact,
    labelMap: [...grouped.labelMap],
    nquads: grouped.nquads,
    mandatoryIndexes: [...grouped.groups.mandatory!.matching.keys()],
    signatureBase: Buffer.from(signatureBase).toString('base64url'),
  };
}

export interface VerifyBaseProofOptions {
  /** Return the prepared statements too (a holder storing the credential), where the BBS suite can. */
  prepare?: boolean;
}

/** A base proof's check; asked to, a valid one brings what later disclosures reuse. */
export type BaseProofCheck = { ok: true; prepared?: PreparedStatements } | { ok: false; reason: string };

/** A credential whose base proof passed every check but the BBS signature's. */
export interface SignedStatements {
  proofValue: unknown;
  grouped: Awaited<ReturnType<typeof canonicalizeAndGroup>>;
  signed: { publicKey: Uint8Array; signature: Uint8Array; header: Uint8Array; messages: Uint8Array[] };
}

/**
 * The holder's checks of an issuer's base proof that come before the BBS signature, which the
 * specification leaves to the holder: the proof value's embedded public key must be the issuer's,
 * and its BBS header must be the one this document and proof configuration produce. A holder that
 * skipped them would derive proofs that no verifier accepts, or that carry another key than the
 * issuer's. JSON-LD errors are thrown (operations.ts names them).
 */
export async function signedStatementsOf(
  document: SecuredDocument,
  issuerPublicKey: Uint8Array,
  jsonLd: JsonLdOptions,
): Promise<{ ok: true; statements: SignedStatements } | { ok: false; reason: string }> {
  const proof = document.proof;
  if (proof?.type !== 'DataIntegrityProof' || proof.cryptosuite !== 'bbs-2023') {
    return proofFailure('the proof is not a bbs-2023 DataIntegrityProof');
  }
  let value: ReturnType<typeof parseBaseProofValue>;
  try {
    value = parseBaseProofValue(proof.proofValue);
  } catch (error) {
    if (error instanceof ProofValueError)
      return proofFailure(`the base proof is malformed: ${error.message}`);
    throw error;
  }
  if (!Buffer.from(value.publicKey).equals(Buffer.from(issuerPublicKey))) {
    return proofFailure("the public key inside the proof value is not the issuer's key");
  }
  const { proofValue: _value, ...proofOptions } = proof;
  const input = await baseSignatureInput(
    unsecured(document),
    proofOptions,
    value.hmacKey,
    value.mandatoryPointers,
    jsonLd,
  );
  if (!Buffer.from(input.header).equals(Buffer.from(value.bbsHeader))) {
    return proofFailure(
      'the mandatory statements or the proof options differ from what the issuer signed (BBS header mismatch)',
    );
  }
  const signed = {
    publicKey: issuerPublicKey,
    signature: value.bbsSignature,
    header: input.header,
    messages: input.messages,
  };
  return { ok: true, statements: { proofValue: proof.proofValue, grouped: input.grouped, signed } };
}

const signatureFailure = () => proofFailure('the BBS signature does not verify over the statements');

/**
 * The BBS signatures of credentials whose other checks passed, checked together where the suite
 * can (one pairing product for the lot, bbs/sign.ts): one answer per credential, as
 * verifyBaseProof would give it.
 */
export async function checkSignedStatements(
  batch: SignedStatements[],
  bbs: BbsSuite,
  options: VerifyBaseProofOptions = {},
): Promise<BaseProofCheck[]> {
  if (bbs.verifySignaturesKeepingBase) {
    const bases = await bbs.verifySignaturesKeepingBase(batch.map((item) => item.signed));
    return batch.map((item, i) => {
      const base = bases[i];
      if (base === undefined) return signatureFailure();
      return options.prepare
        ? { ok: true, prepared: prepareStatements(item.proofValue, item.grouped, base) }
        : { ok: true };
    });
  }
  const checks: BaseProofCheck[] = [];
  for (const item of batch) {
    checks.push((await bbs.verifySignature(item.signed)) ? { ok: true } : signatureFailure());
  }
  return checks;
}

/** Verifies an issuer's base proof: signedStatementsOf, then the BBS signature. */
export async function verifyBaseProof(
  document: SecuredDocument,
  issuerPublicKey: Uint8Array,
  deps: Bbs2023Deps,
  options: VerifyBaseProofOptions = {},
): Promise<BaseProofCheck> {
  const before = await signedStatementsOf(document, issuerPublicKey, deps.jsonLd);
  if (!before.ok) return before;
  const [check] = await checkSignedStatements([before.statements], deps.bbs, options);
  return check!;
}

/**
 * Adds a base proof (§3.4.1–3.4.5), as an issuer does: Coffer's ldp_vc issuance
 * (ldp-vc/issue-credential.ts), and the benchmarks and tests.
 */
export async function createBaseProof(
  document: Record<string, unknown>,
  options: ProofOptions,
  key: { secretKey: Uint8Array; publicKey: Uint8Array },
  mandatoryPointers: string[],
  deps: Bbs2023Deps,
): Promise<SecuredDocument> {
  const hmacKey = new Uint8Array(randomBytes(32));
  const input = await baseSignatureInput(document, options, hmacKey, mandatoryPointers, deps.jsonLd);
  const bbsSignature = await deps.bbs.sign({ ...key, header: input.header, messages: input.messages });
  const proofValue = serializeBaseProofValue({
    bbsSignature,
    bbsHeader: input.header,
    publicKey: key.publicKey,
    hmacKey,
    mandatoryPointers,
  });
  return { ...document, proof: { ...options, proofValue } } as SecuredDocument;
}
