import type { JsonWebKey } from 'node:crypto';
import type { AuthorizationServerMetadata } from '@openid4vc/oauth2';
import { Oauth2Client, Oauth2ClientErrorResponseError } from '@openid4vc/oauth2';
import type { CredentialOfferObject, IssuerMetadataResult } from '@openid4vc/openid4vci';
import { CofferError } from '../errors.ts';
import type { OutboundClient } from '../http/outbound.ts';
import { explainFailure } from './issuance-offer.ts';
import {
  dpopOptions,
  type IssuanceKey,
  type IssuanceToken,
  issuanceCallbacks,
  issuanceClient,
  newIssuanceKey,
  type WalletAuthentication,
} from './issuer-client.ts';
import { authenticationFor } from './wallet-attestation.ts';

/**
 * The grants (§3.5, §6): the pre-authorized code (with the person's tx_code) and the
 * authorization code (PKCE S256, PAR when the server has an endpoint for it, DPoP when it
 * supports ES256 proofs), through the library's client. Each issuance has an instance key of
 * its own: it binds the DPoP proofs and is the `cnf` of the Wallet Attestations that
 * authenticate the wallet at the PAR and token endpoints when the server takes them (HAIP 1.0
 * §4.3–4.4; one key for both suits servers that require them to match).
 */

export interface GrantContext {
  outbound: OutboundClient;
  clientId: string;
  offer: CredentialOfferObject;
  metadata: IssuerMetadataResult;
  /** Mints a Wallet Attestation for an instance key; absent without WALLET_PROVIDER_KEY. */
  attest?: ((instanceJwk: JsonWebKey) => Promise<string>) | undefined;
}

/** The authorization server of the offer's grant (§12.2.4 authorization_servers). */
export function authorizationServerOf(metadata: IssuerMetadataResult): AuthorizationServerMetadata {
  return metadata.authorizationServers[0]!;
}

/** Whether the authorization server takes ES256 DPoP proofs (RFC 9449 §5.1). */
function usesDpop(server: AuthorizationServerMetadata): boolean {
  const algorithms = server.dpop_signing_alg_values_supported;
  return Array.isArray(algorithms) && algorithms.includes('ES256');
}

/** A P-256 instance key of one issuance (DPoP and Wallet Attestation `cnf`). */
export const newInstanceKey = () => newIssuanceKey('ES256');

/** The Wallet Attestation authentication of this issuance, when the server takes it (wallet-attestation.ts). */
function walletAuthentication(context: GrantContext, instanceKey: IssuanceKey): WalletAuthentication | null {
  const { attest } = context;
  if (authenticationFor(authorizationServerOf(context.metadata), attest !== undefined) === 'none')
    return null;
  return { instanceKey, mint: () => attest!(instanceKey.publicJwk) };
}

/** The `openid_credential` authorization details' credential_identifiers, by configuration (§6.2). */
function credentialIdentifiersOf(details: unknown): Record<string, string[]> | undefined {
  if (!Array.isArray(details)) return undefined;
  const found: Record<string, string[]> = {};
  for (const detail of details as Array<Record<string, unknown>>) {
    const id = detail['credential_configuration_id'];
    const identifiers = detail['credential_identifiers'];
    if (detail['type'] !== 'openid_credential' || typeof id !== 'string' || !Array.isArray(identifiers))
      continue;
    const strings = identifiers.filter((i): i is string => typeof i === 'string' && i.length > 0);
    if (strings.length > 0) found[id] = strings;
  }
  return Object.keys(found).length > 0 ? found : undefined;
}

const tokenOf = (
  accessToken: { access_token: string; token_type: string; authorization_details?: unknown },
  dpopKey: IssuanceKey | null,
  nonce: string | undefined,
): IssuanceToken => {
  const credentialIdentifiers = credentialIdentifiersOf(accessToken.authorization_details);
  return {
    accessToken: accessToken.access_token,
    ...(credentialIdentifiers ? { credentialIdentifiers } : {}),
    // A server that answers a DPoP proof with a Bearer token did not bind it; the key is then unused.
    dpop: dpopKey && accessToken.token_type.toLowerCase() === 'dpop' ? { key: dpopKey, nonce } : null,
  };
};

export async function preAuthorizedToken(
  context: GrantContext,
  txCode: string | undefined,
): Promise<IssuanceToken> {
  const instanceKey = newInstanceKey();
  const dpopKey = usesDpop(authorizationServerOf(context.metadata)) ? instanceKey : null;
  const client = issuanceClient(context.outbound, context.clientId, dpopKey ? [dpopKey] : [], {
    authentication: walletAuthentication(context, instanceKey),
  });
  const dpop = dpopKey
    ? dpopOptions({ accessToken: '', dpop: { key: dpopKey, nonce: undefined } })
    : undefined;
  try {
    const answer = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer: context.offer,
      issuerMetadata: context.metadata,
      ...(txCode === undefined ? {} : { txCode }),
      ...(dpop ? { dpop } : {}),
    });
    return tokenOf(answer.accessTokenResponse, dpopKey, answer.dpop?.nonce);
  } catch (error) {
    const refusal = error instanceof Oauth2ClientErrorResponseError ? error.errorResponse : undefined;
    if (txCode !== undefined && refusal?.error === 'invalid_grant') {
      throw new CofferError(
        'invalid_request',
        `The issuer did not accept the transaction code${refusal.error_description ? `: ${String(refusal.error_description).slice(0, 200)}` : ''}. Check it and try again.`,
        { details: [{ path: '/body/tx_code', message: 'was not accepted by the issuer' }] },
      );
    }
    throw explainFailure(error, 'the issuer did not accept the offer');
  }
}

export interface StartedAuthorization {
  url: string;
  codeVerifier: string;
  /** Whether the instance key binds DPoP proofs at this server. */
  dpop: boolean;
  dpopNonce: string | undefined;
}

/** Scope where every offered configuration has one, else authorization_details (§5.1.1–5.1.2). */
function authorizationScope(metadata: IssuerMetadataResult, ids: string[]) {
  const supported = metadata.credentialIssuer.credential_configurations_supported as Record<
    string,
    { scope?: string }
  >;
  const scopes = ids.map((id) => supported[id]?.scope);
  if (scopes.every((scope) => typeof scope === 'string')) return { scope: scopes.join(' ') };
  return {
    additional: {
      authorization_details: ids.map((id) => ({
        type: 'openid_credential',
        credential_configuration_id: id,
      })),
    },
  };
}

/**
 * The authorization request: built with Oauth2Client.createAuthorizationRequestUrl, which keeps
 * `state` (the offer-based helper of openid4vci 0.4.6 drops it) and pushes it when the server
 * has a PAR endpoint. PKCE is always S256, even when the server's metadata does not list it.
 */
export async function startAuthorization(
  context: GrantContext & { state: string; redirectUri: string; instanceKey: IssuanceKey },
): Promise<StartedAuthorization> {
  const server = authorizationServerOf(context.metadata);
  const dpopKey = usesDpop(server) ? context.instanceKey : null;
  const callbacks = issuanceCallbacks(
    context.outbound,
    context.clientId,
    dpopKey ? [dpopKey] : [],
    walletAuthentication(context, context.instanceKey),
  );
  const grant = context.offer.grants?.['authorization_code'] as { issuer_state?: string } | undefined;
  const { scope, additional } = authorizationScope(
    context.metadata,
    context.offer.credential_configuration_ids,
  );
  try {
    const started = await new Oauth2Client({ callbacks }).createAuthorizationRequestUrl({
      authorizationServerMetadata: { ...server, code_challenge_methods_supported: ['S256'] },
      clientId: context.clientId,
      redirectUri: context.redirectUri,
      state: context.state,
      ...(scope ? { scope } : {}),
      additionalRequestPayload: {
        ...additional,
        ...(grant?.issuer_state ? { issuer_state: grant.issuer_state } : {}),
      },
      ...(dpopKey
        ? { dpop: dpopOptions({ accessToken: '', dpop: { key: dpopKey, nonce: undefined } })! }
        : {}),
    });
    return {
      url: started.authorizationRequestUrl,
      codeVerifier: started.pkce!.codeVerifier,
      dpop: dpopKey !== null,
      dpopNonce: started.dpop?.nonce,
    };
  } catch (error) {
    throw explainFailure(error, 'its authorization server did not take the authorization request');
  }
}

export async function authorizationCodeToken(
  context: GrantContext & { code: string; codeVerifier: string; redirectUri: string },
  instanceKey: IssuanceKey,
  binding: { dpop: boolean; nonce: string | undefined },
): Promise<IssuanceToken> {
  const dpopKey = binding.dpop ? instanceKey : null;
  const dpopNonce = binding.nonce;
  const client = issuanceClient(context.outbound, context.clientId, dpopKey ? [dpopKey] : [], {
    authentication: walletAuthentication(context, instanceKey),
  });
  const dpop = dpopKey
    ? dpopOptions({ accessToken: '', dpop: { key: dpopKey, nonce: dpopNonce } })
    : undefined;
  try {
    const answer = await client.retrieveAuthorizationCodeAccessTokenFromOffer({
      credentialOffer: context.offer,
      issuerMetadata: context.metadata,
      authorizationCode: context.code,
      pkceCodeVerifier: context.codeVerifier,
      redirectUri: context.redirectUri,
      ...(dpop ? { dpop } : {}),
    });
    return tokenOf(answer.accessTokenResponse, dpopKey, answer.dpop?.nonce);
  } catch (error) {
    throw explainFailure(error, 'the issuer did not exchange the authorization code');
  }
}
