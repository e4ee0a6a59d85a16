import { randomUUID } from 'node:crypto';
import { base58btc } from 'multiformats/bases/base58';
import type { BbsSuite } from '../../src/bbs/index.ts';
import { createBaseProof } from '../../src/formats/ldp-vc/bbs-2023/base-proof.ts';
import type { SecuredDocument } from '../../src/formats/ldp-vc/bbs-2023/shared.ts';
import { createDocumentLoader } from '../../src/formats/ldp-vc/contexts/document-loader.ts';
import { PERSON_CONTEXT, PERSON_CONTEXT_URL } from '../credentials/stock-issuer.ts';

/** The claims context bench credentials use; the server must have it registered. */
export const BENCH_CONTEXT_URL = PERSON_CONTEXT_URL;
export const BENCH_CONTEXT = PERSON_CONTEXT;

export const benchJsonLd = {
  documentLoader: createDocumentLoader(async (url) =>
    url === BENCH_CONTEXT_URL ? BENCH_CONTEXT : undefined,
  ),
};

/** A credential with `claims` string claims (claim_0 …) for the subject, unsigned. */
export function benchCredential(issuer: string, subject: string, claims: number): Record<string, unknown> {
  return {
    '@context': ['https://www.w3.org/ns/credentials/v2', BENCH_CONTEXT_URL],
    id: `urn:uuid:${randomUUID()}`,
    type: ['VerifiableCredential', 'PersonCredential'],
    issuer,
    validFrom: '2024-01-01T00:00:00Z',
    credentialSubject: {
      id: subject,
      ...Object.fromEntries(
        Array.from({ length: claims }, (_, i) => [`claim_${i}`, `value ${i} ${randomUUID()}`]),
      ),
    },
  };
}

export interface BenchIssuer {
  did: string;
  publicKey: Uint8Array;
  issue(subject: string, claims: number): Promise<SecuredDocument>;
}

/** An issuer with a fresh BLS12-381 key, signing bbs-2023 base proofs with the given BBS suite. */
export async function createBenchIssuer(bbs: BbsSuite): Promise<BenchIssuer> {
  const key = await bbs.generateKeyPair();
  const multibase = base58btc.encode(Uint8Array.from([0xeb, 0x01, ...key.publicKey]));
  const did = `did:key:${multibase}`;
  const options = {
    type: 'DataIntegrityProof' as const,
    cryptosuite: 'bbs-2023' as const,
    verificationMethod: `${did}#${multibase}`,
    proofPurpose: 'assertionMethod',
  };
  return {
    did,
    publicKey: key.publicKey,
    issue: (subject, claims) =>
      createBaseProof(benchCredential(did, subject, claims), options, key, ['/issuer'], {
        bbs,
        jsonLd: benchJsonLd,
      }),
  };
}
