import type { JsonLdOptions } from '@digitalbazaar/di-sd-primitives';
import { type BbsSuite, fastBbs } from '../../bbs/index.ts';
import {
  bitstringStatusEntry,
  type CredentialToIssue,
  dateTime,
  holderDidOf,
  type IssuerSigningMaterial,
  subjectClaimsOf,
} from '../credential-issuance.ts';
import { createBaseProof } from './bbs-2023/base-proof.ts';
import type { SecuredDocument } from './bbs-2023/shared.ts';
import { pointersOf } from './claim-pointers.ts';
import { createDocumentLoader } from './contexts/document-loader.ts';
import { VC_V2_CONTEXT } from './ldp-vc-rules.ts';

/**
 * Signs a W3C VC Data Model 2.0 credential with a bbs-2023 base proof (Coffer's fast BBS core),
 * so that the holder can disclose claims one by one.
 */

/**
 * VC 2.0 and its undefined-terms context, whose `@vocab` gives every claim and type name an IRI
 * (VC 2.0 §5.2): both are bundled with every wallet and verifier that knows VC 2.0, so no
 * issuer context has to be published or registered. The issuer metadata's `@context` must be
 * these too.
 */
export const ISSUED_LDP_CONTEXTS = [VC_V2_CONTEXT, 'https://www.w3.org/ns/credentials/undefined-terms/v2'];

/**
 * What every derived proof reveals (DESIGN.md: issuer, type, validity), and the status entry,
 * without which a verifier cannot tell a revoked credential. The subject's id is not among them:
 * it comes along with any subject claim (every such statement is about that node) and a
 * presentation of none need not show it.
 */
const MANDATORY = ['/issuer', '/type', '/validFrom', '/validUntil', '/credentialStatus'];

/** Only the bundled contexts (VC 2.0 among them): nothing a registry or the network would add. */
const bundledOnly: JsonLdOptions = { documentLoader: createDocumentLoader(async () => undefined) };

export interface LdpIssueDeps {
  /** The document loader: the bundled contexts unless the issuer's registry is given. */
  jsonLd?: JsonLdOptions;
  bbs?: BbsSuite;
}

/** A bbs-2023 secured credential whose subject is the holder's DID. */
export async function issueLdpVc(
  material: IssuerSigningMaterial,
  credential: CredentialToIssue,
  _now: Date,
  deps: LdpIssueDeps = {},
): Promise<SecuredDocument> {
  const claims = subjectClaimsOf(credential.claims);
  const { bbs } = material;
  const { validUntil, status } = credential;
  const document: Record<string, unknown> = {
    '@context': ISSUED_LDP_CONTEXTS,
    id: credential.id,
    type: ['VerifiableCredential', credential.type],
    issuer: bbs.did,
    validFrom: dateTime(credential.validFrom),
    ...(validUntil ? { validUntil: dateTime(validUntil) } : {}),
    credentialSubject: { id: holderDidOf(credential.holder), ...claims },
    ...(status ? { credentialStatus: bitstringStatusEntry(status) } : {}),
  };
  const options = {
    type: 'DataIntegrityProof' as const,
    cryptosuite: 'bbs-2023' as const,
    verificationMethod: `${bbs.did}#${bbs.did.slice('did:key:'.length)}`,
    proofPurpose: 'assertionMethod',
  };
  // Claims the configuration keeps disclosed (selectively_disclosable: false) join them.
  const mandatory = [
    ...new Set([
      ...MANDATORY.filter((pointer) => document[pointer.slice(1)] !== undefined),
      ...pointersOf(document, credential.alwaysDisclosed ?? []),
    ]),
  ];
  return createBaseProof(
    document,
    options,
    { secretKey: bbs.secretKey, publicKey: bbs.publicKey },
    mandatory,
    { bbs: deps.bbs ?? fastBbs, jsonLd: deps.jsonLd ?? bundledOnly },
  );
}
