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
