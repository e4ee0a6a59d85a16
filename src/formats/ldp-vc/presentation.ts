import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import type { JsonLdOptions } from '@digitalbazaar/di-sd-primitives';
import { fromJwk } from '@digitalbazaar/ed25519-multikey';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import jsigs from 'jsonld-signatures';
import type { Bbs2023Operations } from '../credentials/bbs-2023/operations.ts';
import type { SecuredDocument } from '../credentials/bbs-2023/shared.ts';
import { disclosedPointers, REQUIRED_FOR_VERIFICATION } from '../credentials/credential-rules.ts';

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
 * A bbs-2023 disclosure of the requested claims, the issuer's mandatory statements, and the issuer
 * and subject a verification needs; no presentation header: the holder's signature over the
 * presentation binds it to this verifier and transaction.
 */
export async function discloseForVerifier(
  credential: SecuredDocument,
  claimPointers: string[],
  operations: Bbs2023Operations,
): Promise<SecuredDocument> {
  const pointers = disclosedPointers(credential, claimPointers, REQUIRED_FOR_VERIFICATION);
  return (await operations.deriveDisclosure(credential, pointers, new Uint8Array())).credential;
}

/** A Verifiable Presentation of one credential, signed by the holder key (eddsa-rdfc-2022). */
export async function signPresentation(
  credential: SecuredDocument,
  holder: Holder,
  audience: Audience,
  jsonLd: JsonLdOptions,
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
  return jsigs.sign(presentation, { suite, purpose, documentLoader: jsonLd.documentLoader });
}

/** One presentation to make: which credential, which claims, whose key, bound or not. */
export interface PresentationItem {
  queryId: string;
  credential: SecuredDocument;
  claimPointers: string[];
  /** The holder key, when the query asks for holder binding (a Verifiable Presentation). */
  holder: Holder | null;
}

/**
 * The vp_token (§8.1): per DCQL query id, the presentations made for it, in the order given. The
 * disclosures run in parallel (on the crypto threads); each is then signed by its holder.
 */
export async function buildVpToken(
  items: PresentationItem[],
  audience: Audience,
  deps: { operations: Bbs2023Operations; jsonLd: JsonLdOptions },
): Promise<Record<string, unknown[]>> {
  const presentations = await Promise.all(
    items.map(async (item) => {
      const derived = await discloseForVerifier(item.credential, item.claimPointers, deps.operations);
      return item.holder ? signPresentation(derived, item.holder, audience, deps.jsonLd) : derived;
    }),
  );
  const vpToken: Record<string, unknown[]> = {};
  items.forEach((item, i) => {
    vpToken[item.queryId] ??= [];
    vpToken[item.queryId]!.push(presentations[i]);
  });
  return vpToken;
}
