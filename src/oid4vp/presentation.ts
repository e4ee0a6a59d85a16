import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import { fromJwk } from '@digitalbazaar/ed25519-multikey';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import jsigs from 'jsonld-signatures';
import type { Bbs2023Deps } from '../credentials/bbs-2023/base-proof.ts';
import { deriveDisclosure } from '../credentials/bbs-2023/disclosure.ts';
import type { SecuredDocument } from '../credentials/bbs-2023/shared.ts';
import { disclosedPointers } from '../credentials/credential-rules.ts';

const VC_V2_CONTEXT = 'https://www.w3.org/ns/credentials/v2';

export interface Holder {
  did: string;
  /** The Ed25519 private JWK of the holder key. */
  privateJwk: Record<string, unknown>;
}

/** The verifier binding of a presentation (§14.1.2): challenge = nonce, domain = client_id. */
export interface Audience {
  nonce: string;
  clientId: string;
}

/**
 * A bbs-2023 disclosure of the chosen claims (plus the statements every disclosure carries),
 * with no presentation header: the holder's signature over the presentation binds it to this
 * verifier and transaction.
 */
export async function discloseForVerifier(
  credential: SecuredDocument,
  claimPointers: string[],
  deps: Bbs2023Deps,
): Promise<SecuredDocument> {
  const pointers = disclosedPointers(credential, claimPointers);
  const { credential: derived } = await deriveDisclosure(credential, pointers, new Uint8Array(), deps);
  return derived;
}

/** A Verifiable Presentation of one credential, signed by the holder key (eddsa-rdfc-2022). */
export async function signPresentation(
  credential: SecuredDocument,
  holder: Holder,
  audience: Audience,
  deps: Pick<Bbs2023Deps, 'jsonLd'>,
): Promise<Record<string, unknown>> {
  const fragment = holder.did.slice('did:key:'.length);
  const key = await fromJwk({
    jwk: holder.privateJwk,
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
  return jsigs.sign(presentation, { suite, purpose, documentLoader: deps.jsonLd.documentLoader });
}
