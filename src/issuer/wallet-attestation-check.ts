import { X509Certificate } from 'node:crypto';
import { rememberNonce } from '../db/seen-once.ts';
import { CofferError } from '../errors.ts';
import { chainsToAnchor, validAt } from '../keys/certificate-chain.ts';
import {
  type DecodedJws,
  decodeCompactJws,
  isJwsAlgorithm,
  type JwsAlgorithm,
  publicKeyFromJwk,
  verifyJwsSignature,
} from '../keys/compact-jws.ts';
import type { TokenRequest } from '../oidc/token-service.ts';
import type { IssuerDeps } from './issuer-deps.ts';

const POP_WINDOW = 300;

/**
 * What a Wallet Attestation and its PoP may be signed with: every asymmetric algorithm Coffer
 * verifies. The authorization server's metadata names them
 * (client_attestation_signing_alg_values_supported, client_attestation_pop_signing_alg_values_supported).
 */
export const WALLET_ATTESTATION_ALGORITHMS: JwsAlgorithm[] = [
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'PS256',
];
const acceptedAlgorithm = (alg: unknown): alg is JwsAlgorithm =>
  isJwsAlgorithm(alg) && WALLET_ATTESTATION_ALGORITHMS.includes(alg);
const invalidClient = (why: string) => new CofferError('invalid_client', `Wallet Attestation: ${why}.`);

/** A JWS signed by the leaf of its `x5c`, which chains to a trust anchor; the leaf is returned. */
/** WALLET_PROVIDER_TRUST_ANCHORS and the granted wallet-provider services of TRUSTED_LISTS that can be had now. */
export async function walletProviderAnchors(deps: IssuerDeps): Promise<X509Certificate[]> {
  if (!deps.listedWalletProviders) return deps.walletProviderTrustAnchors;
  return [...deps.walletProviderTrustAnchors, ...(await deps.listedWalletProviders())];
}

export function verifyX5cJws(
  decoded: DecodedJws,
  anchors: X509Certificate[],
  now: Date,
  refuse: (why: string) => Error,
): X509Certificate {
  const x5c = decoded.header['x5c'];
  if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > 5 || !x5c.every((c) => typeof c === 'string')) {
    throw refuse('the x5c header is missing');
  }
  let chain: X509Certificate[];
  try {
    chain = x5c.map((c: string) => new X509Certificate(Buffer.from(c, 'base64')));
  } catch {
    throw refuse('a certificate of x5c cannot be read');
  }
  const [leaf, ...intermediates] = chain;
  if (!validAt(leaf!, now) || !chainsToAnchor(leaf!, intermediates, anchors, now)) {
    throw refuse('its certificate does not chain to WALLET_PROVIDER_TRUST_ANCHORS or a trusted list');
  }
  const alg = decoded.header['alg'];
  if (!acceptedAlgorithm(alg)) throw refuse(`the algorithm ${String(alg)} is not accepted`);
  try {
    verifyJwsSignature(decoded, alg, leaf!.publicKey);
  } catch {
    throw refuse('the signature does not verify with its certificate');
  }
  return leaf!;
}

/**
 * OAuth 2.0 Attestation-Based Client Authentication (OpenID4VCI Annex E, HAIP §4.4.1): the
 * Wallet Attestation signed by a trusted wallet provider, and its proof of possession signed
 * by the instance key it names, for this authorization server, fresh and used once.
 */
export async function checkWalletAttestation(
  deps: IssuerDeps,
  request: Pick<TokenRequest, 'clientAttestation' | 'client_id'>,
  issuerId: string,
): Promise<{ clientId: string }> {
  const { attestation, pop } = request.clientAttestation ?? { attestation: undefined, pop: undefined };
  if (!attestation || !pop) {
    throw invalidClient(
      'this issuer follows HAIP and needs OAuth-Client-Attestation and OAuth-Client-Attestation-PoP',
    );
  }
  const now = deps.now();
  const nowSeconds = Math.floor(now.getTime() / 1000);
  let decoded: DecodedJws;
  let popDecoded: DecodedJws;
  try {
    decoded = decodeCompactJws(attestation);
    popDecoded = decodeCompactJws(pop);
  } catch {
    throw invalidClient('the headers are not compact JWTs');
  }
  if (decoded.header['typ'] !== 'oauth-client-attestation+jwt')
    throw invalidClient('typ must be oauth-client-attestation+jwt');
  verifyX5cJws(decoded, await walletProviderAnchors(deps), now, invalidClient);
  const { sub, exp, cnf } = decoded.payload as { sub?: unknown; exp?: unknown; cnf?: { jwk?: unknown } };
  if (typeof sub !== 'string' || sub.length === 0) throw invalidClient('sub is missing');
  if (typeof exp !== 'number' || exp <= nowSeconds) throw invalidClient('it has expired');
  if (request.client_id && request.client_id !== sub) throw invalidClient('client_id differs from its sub');
  let instanceKey: ReturnType<typeof publicKeyFromJwk>;
  try {
    instanceKey = publicKeyFromJwk(cnf?.jwk);
  } catch {
    throw invalidClient('cnf.jwk is not a public key');
  }
  if (popDecoded.header['typ'] !== 'oauth-client-attestation-pop+jwt') {
    throw invalidClient('the PoP typ must be oauth-client-attestation-pop+jwt');
  }
  const popAlg = popDecoded.header['alg'];
  if (!acceptedAlgorithm(popAlg)) throw invalidClient('the PoP algorithm is not accepted');
  try {
    verifyJwsSignature(popDecoded, popAlg, instanceKey);
  } catch {
    throw invalidClient('the PoP is not signed by the attested instance key');
  }
  const p = popDecoded.payload as { iss?: unknown; aud?: unknown; jti?: unknown; iat?: unknown };
  const audiences = Array.isArray(p.aud) ? p.aud : [p.aud];
  if (p.iss !== sub) throw invalidClient('the PoP iss must be the attested client id');
  if (!audiences.includes(deps.config.publicUrl) && !audiences.includes(issuerId)) {
    throw invalidClient('the PoP aud must be this authorization server');
  }
  if (typeof p.iat !== 'number' || Math.abs(nowSeconds - p.iat) > POP_WINDOW)
    throw invalidClient('the PoP is not fresh');
  if (typeof p.jti !== 'string' || p.jti.length === 0 || p.jti.length > 256)
    throw invalidClient('the PoP jti is missing');
  if (!(await rememberNonce(deps.db, `client-attestation-pop:${sub}`, p.jti, nowSeconds, POP_WINDOW * 2))) {
    throw invalidClient('this PoP has been used already');
  }
  return { clientId: sub };
}
