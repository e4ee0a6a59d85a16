import type { JWK, JWTPayload } from 'jose';
import type { FederationResolver } from '../trust/federation/federation-resolver.ts';
import type { ValidatedChain } from '../trust/federation/trust-chain.ts';
import { TrustError } from '../trust/trust-error.ts';
import { Oid4vpError } from './oid4vp-errors.ts';
import { protectedHeaderOf, verifyRegisteredRequestObject } from './request-object.ts';

/**
 * `openid_federation` (OpenID4VP 1.0 §5.9.3): the client identifier is an Entity Identifier; the
 * verifier's metadata is its `openid_credential_verifier` metadata resolved through a trust chain
 * to one of FEDERATION_TRUST_ANCHORS, policies applied (a `trust_chain` header may carry the
 * chain, validated without fetching), and the request object is signed by a key of that
 * metadata's `jwks`. The request's own `client_metadata` is ignored, as §5.9.3 says.
 */
export interface FederationVerifier {
  entityId: string;
  anchor: string;
  /** What the consent page calls it: its client_name, else its organisation, else its id. */
  name: string;
  /** The resolved `openid_credential_verifier` metadata: the request's client metadata. */
  metadata: Record<string, unknown>;
}

const VERIFIER_TYPE = 'openid_credential_verifier';

function refusal(error: TrustError): Oid4vpError {
  // The verifier's federation could not be reached: not the request's fault, and worth a retry.
  if (error.code === 'fetch_failed') return new Oid4vpError('temporarily_unavailable', error.message);
  return new Oid4vpError('invalid_client', `the verifier's trust chain is not valid: ${error.message}`);
}

async function chainOf(jwt: string, entityId: string, resolver: FederationResolver): Promise<ValidatedChain> {
  const given = protectedHeaderOf(jwt)['trust_chain'];
  try {
    if (given === undefined) return await resolver.resolve(entityId);
    if (!Array.isArray(given) || !given.every((s) => typeof s === 'string'))
      throw new Oid4vpError('invalid_request_object', 'the trust_chain header must be an array of JWTs');
    const chain = await resolver.validate(given);
    if (chain.subject !== entityId)
      throw new Oid4vpError('invalid_client', `the trust_chain header is the chain of ${chain.subject}`);
    return chain;
  } catch (error) {
    if (error instanceof TrustError) throw refusal(error);
    throw error;
  }
}

export async function verifyFederationRequestObject(
  jwt: string,
  entityId: string,
  options: { now: Date; resolver: FederationResolver | undefined },
): Promise<{ payload: JWTPayload; federation: FederationVerifier }> {
  if (!options.resolver)
    throw new Oid4vpError('invalid_client', 'this wallet trusts no federation (FEDERATION_TRUST_ANCHORS)');
  const chain = await chainOf(jwt, entityId, options.resolver);
  const metadata = chain.metadata[VERIFIER_TYPE];
  if (!metadata)
    throw new Oid4vpError('invalid_client', `${entityId} has no ${VERIFIER_TYPE} metadata in its federation`);
  const keys = (metadata['jwks'] as { keys?: unknown } | undefined)?.keys;
  if (!Array.isArray(keys))
    throw new Oid4vpError('invalid_client', `the ${VERIFIER_TYPE} metadata of ${entityId} has no jwks`);
  const payload = await verifyRegisteredRequestObject(jwt, keys as JWK[], options.now);
  const organisation = chain.metadata['federation_entity']?.['organization_name'];
  const name = [metadata['client_name'], organisation].find((n) => typeof n === 'string' && n.trim() !== '');
  return {
    payload,
    federation: { entityId, anchor: chain.anchor, name: (name as string | undefined) ?? entityId, metadata },
  };
}
