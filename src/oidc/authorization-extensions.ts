/**
 * Authorization requests another service answers at this OP's authorization and PAR endpoints:
 * a wallet asking a credential issuer (OpenID4VCI §5) is no registered client, so the OIDC client
 * checks do not apply. The extension recognises its requests (authorization_details of its type,
 * its scopes, its issuer_state, its request_uri), checks them itself and leads the person to log in.
 */
export interface AuthorizationExtension {
  /** Whether the parameters (an authorization request's query, a pushed request's body) are this extension's. */
  handles(params: Record<string, unknown>): Promise<boolean>;
  /**
   * A pushed authorization request (RFC 9126), its DPoP proof already verified (its key's
   * thumbprint, or null) and the wallet's attestation headers given as they came.
   */
  push(
    params: Record<string, string>,
    context: {
      dpopJkt: string | null;
      clientAttestation: { attestation: string | undefined; pop: string | undefined };
    },
  ): Promise<{ request_uri: string; expires_in: number }>;
  /** The authorization endpoint: where the browser goes next, or why the request is refused. */
  authorize(query: Record<string, unknown>): Promise<{ redirectTo: string } | { errorPage: string }>;
}
