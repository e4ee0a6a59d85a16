import { describeJsonLdError } from '../contexts/jsonld-errors.ts';
import {
  type BaseProofCheck,
  type Bbs2023Deps,
  type VerifyBaseProofOptions,
  verifyBaseProof,
} from './base-proof.ts';
import { verifyDerivedProof } from './derived-proof.ts';
import { type Disclosure, deriveDisclosure } from './disclosure.ts';
import type { ProofCheck, SecuredDocument } from './shared.ts';

/**
 * The costly bbs-2023 operations the service runs, behind one interface so that they can run in
 * this thread or in worker threads (crypto-pool.ts beside this file) alike. Input and output are plain
 * data; JSON-LD problems of a credential come back as a failed check, not as an exception.
 */
export interface Bbs2023Operations {
  verifyBaseProof(
    document: SecuredDocument,
    issuerPublicKey: Uint8Array,
    options?: VerifyBaseProofOptions,
  ): Promise<BaseProofCheck>;
  /** `prepared`: what a valid check returned for this credential, kept by the holder (optional). */
  deriveDisclosure(
    document: SecuredDocument,
    selectivePointers: string[],
    presentationHeader: Uint8Array,
    prepared?: unknown,
  ): Promise<Disclosure>;
  /** A derived proof's check (a verifier's), with the presentation header it must carry. */
  verifyDerivedProof(
    document: SecuredDocument,
    issuerPublicKey: Uint8Array,
    presentationHeader: Uint8Array,
  ): Promise<ProofCheck>;
}

/** A base-proof check whose JSON-LD failures (unknown context, undefined term) become reasons. */
export async function checkBaseProof(
  document: SecuredDocument,
  issuerPublicKey: Uint8Array,
  deps: Bbs2023Deps,
  options: VerifyBaseProofOptions = {},
): Promise<BaseProofCheck> {
  try {
    return await verifyBaseProof(document, issuerPublicKey, deps, options);
  } catch (error) {
    const reason = describeJsonLdError(error);
    if (reason) return { ok: false, reason };
    throw error;
  }
}

/** A derived-proof check whose JSON-LD failures (unknown context, undefined term) become reasons. */
export async function checkDerivedProof(
  document: SecuredDocument,
  issuerPublicKey: Uint8Array,
  presentationHeader: Uint8Array,
  deps: Bbs2023Deps,
): Promise<ProofCheck> {
  try {
    return await verifyDerivedProof(document, issuerPublicKey, presentationHeader, deps);
  } catch (error) {
    const reason = describeJsonLdError(error);
    if (reason) return { ok: false, reason };
    throw error;
  }
}

export function inProcessOperations(deps: Bbs2023Deps): Bbs2023Operations {
  return {
    verifyBaseProof: (document, issuerPublicKey, options) =>
      checkBaseProof(document, issuerPublicKey, deps, options),
    deriveDisclosure: (document, pointers, header, prepared) =>
      deriveDisclosure(document, pointers, header, deps, prepared),
    verifyDerivedProof: (document, issuerPublicKey, header) =>
      checkDerivedProof(document, issuerPublicKey, header, deps),
  };
}
