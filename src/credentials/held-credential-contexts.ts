import type { ClaimName } from '../formats/display-names.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';

/**
 * The associated data of a held credential's sealed columns: each names the account's DID and
 * the credential (or block), so a value copied into another row does not decrypt.
 */

/** A received credential's issuer display (name, logo), for the wallet page. */
export const issuerDisplayContext = (did: string, credentialId: string) =>
  `credentials/${did}/${credentialId}/issuer_display`;

/** A received copy's holder key: bound to its account and block. */
export const copyKeyContext = (did: string, cid: string) => `credential-copies/${did}/${cid}/holder_key`;

/** What a `credential_deleted` notification needs (OpenID4VCI §11). */
export const notificationContext = (did: string, credentialId: string) =>
  `credentials/${did}/${credentialId}/notification`;

/**
 * What is kept, sealed, of an issuer's metadata with a credential received by OpenID4VCI: its
 * display (name, logo), the display name of the configuration it was issued by (absent in
 * rows stored before it was kept, null when the configuration names none) and the names that
 * configuration gives its claims (absent in rows stored before they were kept).
 */
export interface StoredIssuerDisplay {
  name: string;
  logo: { uri: string; alt_text: string | null } | null;
  credential_name?: string | null;
  claim_names?: ClaimName[];
}

/** A received credential's issuer display; null for a credential an app stored. */
export function openIssuerDisplay(
  cipher: FieldCipher,
  row: { did: string; credential_id: string; issuer_display_sealed: string | null },
): StoredIssuerDisplay | null {
  if (!row.issuer_display_sealed) return null;
  return JSON.parse(
    cipher.decrypt(row.issuer_display_sealed, issuerDisplayContext(row.did, row.credential_id)),
  ) as StoredIssuerDisplay;
}
