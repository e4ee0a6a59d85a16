import type { KeyObject } from 'node:crypto';
import type { DcqlQuery } from 'dcql';
import type { JWK } from 'jose';
import { type EcdsaAlgorithm, signCompactJws } from '../keys/compact-jws.ts';
import type { VerifierDeps } from './verifier-deps.ts';
import type { VerifierIdentity } from './verifier-keys.ts';
import type { VerifierRequestRow } from './verifier-repository.ts';

/** What a verifier request keeps (the `request` column, JSON). */
export interface StoredRequest {
  /** The client_id wallets see, with its prefix. */
  clientId: string;
  responseMode: 'direct_post.jwt' | 'direct_post' | 'dc_api.jwt' | 'dc_api';
  dcqlQuery: DcqlQuery.Output;
  /** The transaction data items as sent to the wallet (base64url JSON). */
  transactionData: string[];
  redirectUri: string | null;
  expectedOrigins: string[] | null;
  /** PEM CA certificates and DIDs trusted for this request. */
  trustedIssuers: string[];
  /** Only those are trusted, not ISSUER_TRUST_ANCHORS (a client's wallet log-in that names its issuers). */
  onlyTrustedIssuers?: boolean;
  checkStatus: boolean;
  callbackUrl: string | null;
  /** The public half of the response encryption key, as client_metadata.jwks carries it. */
  encryptionJwk: JWK;
}

/** What Coffer verifies, per format (OpenID4VP Appendix B): any algorithm a holder's key may use. */
const JOSE_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const COSE_ALGORITHMS = [-7, -35, -36, -8, -9, -19];
export const VP_FORMATS_SUPPORTED = {
  'dc+sd-jwt': { 'sd-jwt_alg_values': JOSE_ALGORITHMS, 'kb-jwt_alg_values': JOSE_ALGORITHMS },
  mso_mdoc: { issuerauth_alg_values: COSE_ALGORITHMS, deviceauth_alg_values: COSE_ALGORITHMS },
  jwt_vc_json: { alg_values: JOSE_ALGORITHMS },
  ldp_vc: { proof_type_values: ['DataIntegrityProof'], cryptosuite_values: ['bbs-2023', 'eddsa-rdfc-2022'] },
};
export const CONTENT_ENCRYPTION = ['A128GCM', 'A256GCM'];
const SELF_ISSUED = 'https://self-issued.me/v2';

export const requestUriOf = (deps: Pick<VerifierDeps, 'config'>, id: string) =>
  `${deps.config.publicUrl}/v1/verifier/requests/${id}/request-object`;

/** The `openid4vp://` request for a QR code or a link: by reference, fetched by POST (§5.10). */
export const authorizationRequestOf = (clientId: string, requestUri: string, scheme = 'openid4vp') =>
  `${scheme}://?${new URLSearchParams({ client_id: clientId, request_uri: requestUri, request_uri_method: 'post' })}`;

/**
 * A request HAIP 1.0 shapes (x509_hash, signed by reference, direct_post.jwt) is also offered under
 * the custom scheme HAIP wallets must answer (`haip://`).
 */
export const isHaipShaped = (stored: Pick<StoredRequest, 'clientId' | 'responseMode'>) =>
  stored.clientId.startsWith('x509_hash:') && stored.responseMode === 'direct_post.jwt';

export const isEncrypted = (mode: StoredRequest['responseMode']) => mode.endsWith('.jwt');
export const responseUriOf = (deps: Pick<VerifierDeps, 'config'>, id: string) =>
  `${deps.config.publicUrl}/v1/verifier/requests/${id}/response`;

/** The request whose response URI this is, if it is one of this deployment's. */
export function requestIdOfResponseUri(publicUrl: string, uri: string): string | undefined {
  const prefix = `${publicUrl}/v1/verifier/requests/`;
  if (!uri.startsWith(prefix)) return undefined;
  const match = /^([A-Za-z0-9_-]{1,64})\/response$/.exec(uri.slice(prefix.length));
  return match?.[1];
}

/** §5.8: the wallet's issuer when it named one (dynamic discovery), else the static audience. */
function audienceOf(walletMetadata: Record<string, unknown> | undefined): string {
  const issuer = walletMetadata?.['issuer'];
  return typeof issuer === 'string' && /^https:\/\//.test(issuer) ? issuer : SELF_ISSUED;
}

/** The content encryption the wallet said it supports, where it said so; else both of Coffer's. */
function contentEncryptionFor(walletMetadata: Record<string, unknown> | undefined): string[] {
  const offered = walletMetadata?.['authorization_encryption_enc_values_supported'];
  if (!Array.isArray(offered)) return CONTENT_ENCRYPTION;
  const common = CONTENT_ENCRYPTION.filter((enc) => offered.includes(enc));
  return common.length ? common : CONTENT_ENCRYPTION;
}

/**
 * The signed request object (RFC 9101, OpenID4VP §5): `typ` oauth-authz-req+jwt, the verifier's
 * chain in `x5c` (or, for openid_federation, the `kid` its Entity Configuration lists), the request as the tenant made it, and a key made for this request only to
 * which the wallet encrypts its answer.
 */
export async function signRequestObject(
  deps: Pick<VerifierDeps, 'config' | 'now'>,
  verifier: { key: KeyObject; identity: VerifierIdentity; kid: string },
  row: Pick<VerifierRequestRow, 'id' | 'nonce' | 'state' | 'expires_at'>,
  stored: StoredRequest,
  wallet: { nonce?: string | undefined; metadata?: Record<string, unknown> | undefined },
): Promise<string> {
  const dcApi = stored.responseMode.startsWith('dc_api');
  const encrypted = isEncrypted(stored.responseMode);
  const claims = {
    client_id: stored.clientId,
    response_type: 'vp_token',
    response_mode: stored.responseMode,
    nonce: row.nonce,
    dcql_query: stored.dcqlQuery,
    // Only what §5.1 lets client_metadata carry: wallets must ignore anything else (client_name too:
    // a wallet names an x509 verifier by its certificate).
    client_metadata: {
      vp_formats_supported: VP_FORMATS_SUPPORTED,
      ...(encrypted
        ? {
            jwks: { keys: [stored.encryptionJwk] },
            encrypted_response_enc_values_supported: contentEncryptionFor(wallet.metadata),
          }
        : {}),
    },
    ...(dcApi
      ? { expected_origins: stored.expectedOrigins }
      : { response_uri: responseUriOf(deps, row.id), state: row.state }),
    ...(stored.transactionData.length ? { transaction_data: stored.transactionData } : {}),
    ...(wallet.nonce ? { wallet_nonce: wallet.nonce } : {}),
  };
  const nowSeconds = Math.floor(deps.now().getTime() / 1000);
  return signCompactJws(
    verifier.identity.algorithm as EcdsaAlgorithm,
    // A federation verifier's key is known by its kid in the verifier's Entity Configuration.
    stored.clientId.startsWith('openid_federation:')
      ? { typ: 'oauth-authz-req+jwt', kid: verifier.kid }
      : { typ: 'oauth-authz-req+jwt', x5c: verifier.identity.x5c },
    {
      ...claims,
      aud: audienceOf(wallet.metadata),
      iat: nowSeconds,
      exp: Math.floor(new Date(row.expires_at).getTime() / 1000),
    },
    verifier.key,
  );
}
