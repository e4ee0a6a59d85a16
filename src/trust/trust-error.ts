/**
 * Why trust could not be established, with a stable code (OpenID Federation 1.0 §8.9 names most
 * of them): `invalid_trust_chain` (a statement, a signature, a constraint or an expiry failed),
 * `invalid_metadata` (the metadata policies conflict or the result breaks them),
 * `invalid_trust_anchor` (no configured anchor is reached), `fetch_failed` (a statement or a
 * list could not be fetched: the peer's fault or the network's, not the input's), and
 * `invalid_list` (a trusted list is not one: schema, missing NextUpdate), `signature_invalid` (a
 * trusted list's signature is not a configured signer's, or does not cover it), and
 * `list_expired` (a trusted list past its NextUpdate). Each surface turns
 * it into its own answer (a 502, an `invalid_client`, an untrusted issuer).
 */
export type TrustErrorCode =
  | 'invalid_trust_chain'
  | 'invalid_metadata'
  | 'invalid_trust_anchor'
  | 'fetch_failed'
  | 'invalid_list'
  | 'signature_invalid'
  | 'list_expired';

export class TrustError extends Error {
  override readonly name = 'TrustError';
  readonly code: TrustErrorCode;
  constructor(code: TrustErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
