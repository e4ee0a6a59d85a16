import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import type { JsonLdOptions } from '@digitalbazaar/di-sd-primitives';
import { fromJwk } from '@digitalbazaar/ed25519-multikey';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import jsigs from 'jsonld-signatures';
import type { Audience, HolderKey } from '../credential-format.ts';
import type { Bbs2023Operations } from './bbs-2023/operations.ts';
import type { SecuredDocument } from './bbs-2023/shared.ts';
import { disclosedPointers, REQUIRED_FOR_VERIFICATION, VC_V2_CONTEXT } from './ldp-vc-rules.ts';

/**
 * A bbs-2023 disclosure of the requested claims, the issuer's mandatory statements, and the issuer
 * and subject a verification needs; no presentation header: the holder's signature over the
 * presentation binds it to this verifier and transaction.
 */
export async function discloseForVerifier(
  credential: SecuredDocument,
  claimPointers: string[],
  operations: Bbs2023Operations,
  prepared?: unknown,
): Promise<SecuredDocument> {
  const pointers = disclosedPointers(credential, claimPointers, REQUIRED_FOR_VERIFICATION);
  return (await operations.deriveDisclosure(credential, pointers, new Uint8Array(), prepared)).credential;
}

/**
 * A Verifiable Presentation of one credential, signed by the holder key (eddsa-rdfc-2022), bound
 * to the verifier (§14.1.2): challenge = nonce, domain = client_id.
 */
export async function signPresentation(
  credential: SecuredDocument,
  holder: HolderKey,
  audience: Audience,
  jsonLd: JsonLdOptions,
): Promise<Record<string, unknown>> {
  const fragment = holder.did.slice('did:key:'.length);
  const key = await fromJwk({
    jwk: holder.privateJwk as Record<string, unknown>,
    secretKey: true,
    id: `${holder.did}#${fragment}`,
    controller: holder.did,
  });
  const presentation = {
    '@context': [VC_V2_CONTEXT],
    type: ['VerifiablePresentation'],
    holder: holder.did,
    verifiableCredential: [credential],
  };
  const suite = new DataIntegrityProof({ signer: key.signer(), cryptosuite: eddsaRdfc2022 });
  const purpose = new jsigs.purposes.AuthenticationProofPurpose({
    challenge: audience.nonce,
    domain: audience.clientId,
  });
  return jsigs.sign(presentation, { suite, purpose, documentLoader: jsonLd.documentLoader });
}
