import { calculateJwkThumbprint, type JWK } from 'jose';
import { TrustError } from '../trust-error.ts';
import type { FederationResolver } from './federation-resolver.ts';

/**
 * Whether a credential issuer is trusted through a federation: its Entity Identifier (the
 * credential's `iss`) has a trust chain to a configured anchor, and the key that signed the
 * credential is one of the `jwks` of its resolved `openid_credential_issuer` metadata — so a
 * certificate anyone could make for the issuer's host proves nothing by itself. Answers the
 * anchor, or null (no chain, another key, or a federation that cannot be reached now).
 */
export function federationIssuerTrust(resolver: FederationResolver) {
  return async (issuerId: string, key: JWK): Promise<string | null> => {
    let chain: Awaited<ReturnType<FederationResolver['resolve']>>;
    try {
      chain = await resolver.resolve(issuerId);
    } catch (error) {
      if (error instanceof TrustError) return null;
      throw error;
    }
    const keys = (chain.metadata['openid_credential_issuer']?.['jwks'] as { keys?: unknown } | undefined)
      ?.keys;
    if (!Array.isArray(keys)) return null;
    const wanted = await calculateJwkThumbprint(key);
    for (const candidate of keys) {
      try {
        if ((await calculateJwkThumbprint(candidate as JWK)) === wanted) return chain.anchor;
      } catch {
        // A key the thumbprint cannot be taken of (no kty, unknown curve) names nothing.
      }
    }
    return null;
  };
}
