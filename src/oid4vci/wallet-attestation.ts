import type { JsonWebKey } from 'node:crypto';
import {
  type AuthorizationServerMetadata,
  type ClientAuthenticationCallback,
  clientAuthenticationClientAttestationJwt,
  createClientAttestationJwt,
  type SignJwtCallback,
} from '@openid4vc/oauth2';
import { CompactSign, SignJWT } from 'jose';
import type { WalletProvider } from '../config/wallet-provider.ts';
import { validAt } from '../keys/certificate-chain.ts';
import { offerRefused } from './issuance-offer.ts';

/**
 * Coffer as its own wallet provider (OpenID4VCI 1.0 Annexes D and E, HAIP 1.0 §4.4): Wallet
 * Attestations that authenticate the wallet at an issuer's PAR and token endpoints, and key
 * attestations that vouch for the keys its credentials are bound to.
 *
 * Privacy: nothing in them tells one issuance from another of the same deployment. `sub` is the
 * wallet's client_id (OID4VCI_CLIENT_ID, shared by every person), `cnf` a key made for this one
 * issuance, and neither carries a `jti` or the optional `wallet_name`/`wallet_link`. Key
 * attestations claim nothing about attack resistance: Coffer's keys are software keys encrypted
 * at rest, never evaluated under ISO/IEC 18045, so `key_storage` and `user_authentication` are
 * left out (docs/receiving-oid4vci.md, "Wallet attestations").
 */

/** A Wallet Attestation is minted for each request that needs one, so it lives briefly. */
const ATTESTATION_SECONDS = 600;
/** A key attestation accompanies one credential request (its nonce is that request's c_nonce). */
const KEY_ATTESTATION_SECONDS = 600;

const ATTESTATION_AUTHENTICATION = 'attest_jwt_client_auth';

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** Only the public members, so no private or incidental field of a key is ever attested. */
const publicMembers = (jwk: JsonWebKey): JsonWebKey => ({
  kty: jwk.kty,
  ...(jwk.crv ? { crv: jwk.crv } : {}),
  ...(jwk.x ? { x: jwk.x } : {}),
  ...(jwk.y ? { y: jwk.y } : {}),
});

/** The provider's certificate must be valid when it signs; an expired one is an operator's fix. */
function usableProvider(provider: WalletProvider, now: Date): WalletProvider {
  if (!validAt(provider.leaf, now)) {
    throw offerRefused(
      `this wallet's provider certificate (WALLET_PROVIDER_CHAIN) is valid only from ${provider.leaf.validFrom} to ${provider.leaf.validTo}; the operator must renew it`,
    );
  }
  return provider;
}

/** The library's signJwt for the provider's own `x5c` signer, and no other. */
function providerSigner(provider: WalletProvider): SignJwtCallback {
  return async (signer, { header, payload }) => {
    if (signer.method !== 'x5c' || signer.x5c[0] !== provider.x5c[0]) {
      throw new Error('the wallet provider signs only with its own certificate');
    }
    const jwt = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader(header as { alg: string })
      .sign(provider.privateKey);
    return { jwt, signerJwk: provider.leaf.publicKey.export({ format: 'jwk' }) as never };
  };
}

export interface AttestationInput {
  provider: WalletProvider;
  /** The wallet provider's identifier (`iss`): PUBLIC_URL. */
  providerId: string;
  /** The wallet's client_id at the issuer (`sub`): OID4VCI_CLIENT_ID. */
  clientId: string;
  now: Date;
}

/** A Wallet Attestation (`oauth-client-attestation+jwt`) whose `cnf` is this issuance's instance key. */
export async function walletAttestation(input: AttestationInput, instanceJwk: JsonWebKey): Promise<string> {
  const provider = usableProvider(input.provider, input.now);
  return createClientAttestationJwt({
    issuedAt: input.now,
    expiresAt: new Date(input.now.getTime() + ATTESTATION_SECONDS * 1000),
    issuer: input.providerId,
    clientId: input.clientId,
    confirmation: { jwk: publicMembers(instanceJwk) as never },
    callbacks: { signJwt: providerSigner(provider) },
    signer: { method: 'x5c', x5c: provider.x5c, alg: provider.alg },
  });
}

/**
 * A key attestation (Annex D.1) naming every key of one credential request. Built here rather
 * than with @openid4vc/openid4vci 0.4.6, whose builder writes the draft `typ`
 * `keyattestation+jwt`; OpenID4VCI 1.0 says `key-attestation+jwt`.
 */
export async function keyAttestation(
  input: Omit<AttestationInput, 'clientId'>,
  attestedKeys: JsonWebKey[],
  nonce: string | undefined,
): Promise<string> {
  const provider = usableProvider(input.provider, input.now);
  return new SignJWT({
    iss: input.providerId,
    iat: seconds(input.now),
    exp: seconds(input.now) + KEY_ATTESTATION_SECONDS,
    attested_keys: attestedKeys.map(publicMembers),
    ...(nonce === undefined ? {} : { nonce }),
  })
    .setProtectedHeader({ alg: provider.alg, typ: 'key-attestation+jwt', x5c: provider.x5c })
    .sign(provider.privateKey);
}

/**
 * How the wallet authenticates to an authorization server: with a Wallet Attestation when the
 * server takes one and this deployment has a provider key, else as a public client. A server
 * that takes nothing but attestations is refused up front when there is no provider key.
 */
export function authenticationFor(
  server: AuthorizationServerMetadata,
  attestationAvailable: boolean,
): 'attestation' | 'none' {
  const methods = server.token_endpoint_auth_methods_supported;
  const takesAttestation = Array.isArray(methods) && methods.includes(ATTESTATION_AUTHENTICATION);
  if (takesAttestation && attestationAvailable) return 'attestation';
  if (takesAttestation && !methods.includes('none')) {
    throw offerRefused(
      'the issuer admits only wallets that authenticate with a Wallet Attestation, and this wallet has no wallet-provider key (WALLET_PROVIDER_KEY and WALLET_PROVIDER_CHAIN)',
    );
  }
  return 'none';
}

/** Fetches a fresh challenge from an authorization server's challenge endpoint (ATCA draft 07 §8). */
export type ChallengeFetcher = (endpoint: string) => Promise<string>;

/**
 * Client authentication by Wallet Attestation: a fresh attestation and proof of possession
 * (new `jti`) on every request, `client_id` in the body as well for servers that read it there.
 * When the server's metadata has a `challenge_endpoint` (OAuth 2.0 Attestation-Based Client
 * Authentication, draft 07 §8), a fresh challenge is fetched for each request and carried as the
 * PoP's `challenge`; the library's PoP builder has no such claim, so that PoP is signed here with
 * the instance key the attestation's `cnf` names.
 */
export function attestationAuthentication(
  clientId: string,
  mint: () => Promise<string>,
  callbacks: Parameters<typeof clientAuthenticationClientAttestationJwt>[0]['callbacks'],
  challenged?: { instanceJwk: JsonWebKey; fetchChallenge: ChallengeFetcher },
): ClientAuthenticationCallback {
  return async (request) => {
    request.body['client_id'] = clientId;
    const endpoint = (request.authorizationServerMetadata as { challenge_endpoint?: unknown })
      .challenge_endpoint;
    if (typeof endpoint !== 'string' || !challenged) {
      await clientAuthenticationClientAttestationJwt({ clientAttestationJwt: await mint(), callbacks })(
        request,
      );
      return;
    }
    const attestation = await mint();
    const challenge = await challenged.fetchChallenge(endpoint);
    const now = seconds(new Date());
    const { jwt } = await callbacks.signJwt(
      { method: 'jwk', alg: 'ES256', publicJwk: publicMembers(challenged.instanceJwk) as never },
      {
        header: { typ: 'oauth-client-attestation-pop+jwt', alg: 'ES256' },
        payload: {
          aud: request.authorizationServerMetadata.issuer,
          iss: clientId,
          iat: now,
          exp: now + 60,
          jti: Buffer.from(await callbacks.generateRandom(32)).toString('base64url'),
          challenge,
        },
      },
    );
    request.headers.set('OAuth-Client-Attestation', attestation);
    request.headers.set('OAuth-Client-Attestation-PoP', jwt);
  };
}
