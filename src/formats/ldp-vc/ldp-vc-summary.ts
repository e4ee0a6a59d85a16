import type { CredentialSummary, StatusReference } from '../credential-format.ts';
import { bitstringStatusReference } from '../status-entries.ts';
import { resolveIssuerKey } from './issuer-key.ts';

/**
 * What the store and the verifier read of a W3C credential without cryptography: its issuer, its
 * summary and where its status is published. The holder's stored credential and a verifier's
 * derived one are read alike.
 */

type Document = Record<string, unknown>;

export const issuerOf = (document: Document) => {
  const issuer = document['issuer'];
  return typeof issuer === 'string' ? issuer : String((issuer as { id?: unknown } | undefined)?.id ?? '');
};
const dateOrNull = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

/** What claims paths select from: the credential without its proof, which is no claim. */
function claimsOf(document: Document): Document {
  const { proof: _proof, ...claims } = document;
  return claims;
}

export function summaryOf(document: Document): CredentialSummary {
  return {
    format: 'ldp_vc',
    id: document['id'] as string,
    issuer: issuerOf(document),
    type: document['type'] as string[],
    validFrom: dateOrNull(document['validFrom']),
    validUntil: dateOrNull(document['validUntil']),
    claims: claimsOf(document),
    issuerCertificate: null,
  };
}

/**
 * The credential's Bitstring Status List entry and the issuer key its list must verify with;
 * null when it has none, or its proof's key is not its issuer's. Never throws.
 */
export function ldpStatusReference(document: Document): StatusReference | null {
  if (document?.['credentialStatus'] === undefined) return null;
  try {
    // Not checkCredential: an expired or otherwise refused credential still has a status to show.
    const issuer = issuerOf(document);
    const key = resolveIssuerKey((document['proof'] as Document | undefined)?.['verificationMethod']);
    if (key.controller !== issuer) return null;
    return bitstringStatusReference(document['credentialStatus'], {
      kind: 'bbs',
      publicKey: key.publicKey,
      issuer,
    });
  } catch {
    return null;
  }
}
