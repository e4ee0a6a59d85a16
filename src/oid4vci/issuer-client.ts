import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import {
  type CallbackContext,
  clientAuthenticationNone,
  type JwtSigner,
  type RequestDpopOptions,
  type VerifyJwtCallback,
} from '@openid4vc/oauth2';
import { Openid4vciClient } from '@openid4vc/openid4vci';
import { CompactSign } from 'jose';
import { type OutboundClient, OutboundError } from '../http/outbound.ts';
import { attestationAuthentication } from './wallet-attestation.ts';

/**
 * The wallet side of OpenID4VCI is @openid4vc/openid4vci and @openid4vc/oauth2 (DESIGN.md,
 * Chosen dependencies); Coffer gives them their callbacks: fetch under the wallet's outbound
 * rules, hashing, randomness, and JWT signing with the keys of one issuance.
 */

/** Credentials, batches of them and metadata are larger than a verifier's request: 1 MiB. */
const ISSUANCE_MAX_BYTES = 1024 * 1024;

function bodyOf(body: RequestInit['body']): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  throw new OutboundError('the request body is of a kind Coffer does not send');
}

/**
 * A WWW-Authenticate value with the DPoP and Bearer schemes in their registered spelling. Auth
 * schemes are case-insensitive (RFC 9110 §11.1), but @openid4vc/oauth2 0.4 compares `DPoP`
 * exactly, so a resource server's `dPoP error="use_dpop_nonce"` would otherwise not be retried
 * with its nonce (the conformance suite's rs-dpop-auth-scheme-case-insensitivity module).
 */
export function canonicalAuthSchemes(value: string): string {
  return value.replace(
    /(^|,)(\s*)(dpop|bearer)(?=\s+[^\s=,]+\s*=|\s*,|\s*$)/gi,
    (_m, start, space, scheme) => `${start}${space}${scheme.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer'}`,
  );
}

/** `fetch` for the libraries, made by the outbound client: HTTPS only, limits, no redirects, no private targets. */
export function outboundFetch(outbound: OutboundClient): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'POST')
      throw new OutboundError(`Coffer does not send ${method} requests`);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const body = bodyOf(init?.body);
    const answer = await outbound({
      method,
      url,
      headers,
      ...(body === undefined ? {} : { body }),
      maxBytes: ISSUANCE_MAX_BYTES,
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (name === 'www-authenticate') responseHeaders.set(name, canonicalAuthSchemes(value));
      else if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'content-encoding')
        responseHeaders.set(name, value);
    }
    const status = answer.status >= 200 && answer.status <= 599 ? answer.status : 502;
    const empty = status === 204 || status === 205 || status === 304;
    return new Response(empty ? null : answer.body, { status, headers: responseHeaders });
  }) as typeof fetch;
}

/** POSTs to a challenge endpoint (ATCA draft 07 §8: empty body) and reads `attestation_challenge`. */
function challengeFetcher(outbound: OutboundClient) {
  return async (endpoint: string): Promise<string> => {
    const answer = await outboundFetch(outbound)(endpoint, { method: 'POST' });
    const body = (await answer.json().catch(() => undefined)) as
      | { attestation_challenge?: unknown }
      | undefined;
    if (!answer.ok || typeof body?.attestation_challenge !== 'string') {
      throw new OutboundError(
        `the authorization server's challenge endpoint answered ${answer.status} without an attestation_challenge`,
      );
    }
    return body.attestation_challenge;
  };
}

/** A private key of one issuance: a DPoP key, a holder key, or the account's did:key. */
export interface IssuanceKey {
  privateKey: KeyObject;
  publicJwk: JsonWebKey;
  /** For the account's did:key: the DID URL proofs name in `kid`. */
  didUrl?: string;
}

export function issuanceKeyOf(privateJwk: JsonWebKey, didUrl?: string): IssuanceKey {
  const privateKey = createPrivateKey({ key: privateJwk, format: 'jwk' });
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' });
  return { privateKey, publicJwk, ...(didUrl ? { didUrl } : {}) };
}

/** A fresh key: P-256 for ES256, Ed25519 for EdDSA. */
export function newIssuanceKey(algorithm: 'ES256' | 'EdDSA'): IssuanceKey {
  const { privateKey } =
    algorithm === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('ed25519');
  return { privateKey, publicJwk: createPublicKey(privateKey).export({ format: 'jwk' }) };
}

export const privateJwkOf = (key: IssuanceKey): JsonWebKey => key.privateKey.export({ format: 'jwk' });

const sameKey = (a: JsonWebKey, b: Record<string, unknown>) =>
  a.kty === b['kty'] && a.crv === b['crv'] && a.x === b['x'] && (a.y ?? null) === (b['y'] ?? null);

function keyOfSigner(keys: IssuanceKey[], signer: JwtSigner): IssuanceKey {
  const key =
    signer.method === 'jwk'
      ? keys.find((k) => sameKey(k.publicJwk, signer.publicJwk as Record<string, unknown>))
      : signer.method === 'did'
        ? keys.find((k) => k.didUrl === signer.didUrl)
        : undefined;
  if (!key) throw new Error(`no key of this issuance signs for ${signer.method}`);
  return key;
}

const HASHES = { 'sha-256': 'sha256', 'sha-384': 'sha384', 'sha-512': 'sha512' } as const;

/**
 * Authentication by Wallet Attestation for one issuance (wallet-attestation.ts): the instance
 * key its `cnf` names, which signs each proof of possession, and how to mint an attestation.
 */
export interface WalletAuthentication {
  instanceKey: IssuanceKey;
  mint: () => Promise<string>;
}

/**
 * The library callbacks for one issuance, signing with its keys only; a public client unless
 * the issuance authenticates with a Wallet Attestation.
 */
export function issuanceCallbacks(
  outbound: OutboundClient,
  clientId: string,
  keys: IssuanceKey[],
  authentication?: WalletAuthentication | null,
): Omit<CallbackContext, 'verifyJwt' | 'decryptJwe' | 'encryptJwe'> {
  const signing = authentication ? [...keys, authentication.instanceKey] : keys;
  const signJwt: CallbackContext['signJwt'] = async (signer, { header, payload }) => {
    const key = keyOfSigner(signing, signer);
    const jwt = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader(header as { alg: string })
      .sign(key.privateKey);
    return { jwt, signerJwk: key.publicJwk as never };
  };
  const generateRandom = (length: number) => randomBytes(length);
  return {
    fetch: outboundFetch(outbound),
    hash: (data, algorithm) => createHash(HASHES[algorithm]).update(data).digest(),
    generateRandom,
    clientAuthentication: authentication
      ? attestationAuthentication(
          clientId,
          authentication.mint,
          { signJwt, generateRandom },
          {
            instanceJwk: authentication.instanceKey.publicJwk,
            fetchChallenge: challengeFetcher(outbound),
          },
        )
      : clientAuthenticationNone({ clientId }),
    signJwt,
  };
}

/**
 * The library's client for one issuance. With `verifyJwt` it also asks for signed metadata
 * (Accept: application/jwt) and verifies what it gets (signed-metadata.ts).
 */
export function issuanceClient(
  outbound: OutboundClient,
  clientId: string,
  keys: IssuanceKey[] = [],
  options: { verifyJwt?: VerifyJwtCallback; authentication?: WalletAuthentication | null } = {},
) {
  const { verifyJwt, authentication } = options;
  const callbacks = issuanceCallbacks(outbound, clientId, keys, authentication);
  if (!verifyJwt) return new Openid4vciClient({ callbacks });
  // openid4vci 0.4.6 takes signed metadata when it comes but never asks for it (§12.2.2 wants
  // Accept: application/jwt), so the metadata request asks here.
  const fetchPlain = callbacks.fetch!;
  const asking = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!new URL(url).pathname.includes('/.well-known/openid-credential-issuer'))
      return fetchPlain(input, init);
    const headers = new Headers(init?.headers);
    headers.set('accept', 'application/jwt, application/json;q=0.9');
    return fetchPlain(input, { ...init, headers });
  }) as typeof fetch;
  // The client's type leaves verifyJwt out, yet its metadata resolution uses one when given.
  const withVerifier = { ...callbacks, fetch: asking, verifyJwt } as typeof callbacks;
  return new Openid4vciClient({ callbacks: withVerifier });
}

/** An access token of one issuance and, when DPoP-bound, its key and the server's latest nonce. */
export interface IssuanceToken {
  accessToken: string;
  dpop: { key: IssuanceKey; nonce: string | undefined } | null;
  /**
   * The token response's `credential_identifiers` by configuration (§6.2 authorization_details);
   * a Credential Request for such a configuration names an identifier instead (§8.2).
   */
  credentialIdentifiers?: Record<string, string[]>;
}

/** The DPoP options of a request, as the library takes them. */
export function dpopOptions(token: IssuanceToken): RequestDpopOptions | undefined {
  if (!token.dpop) return undefined;
  return {
    signer: { method: 'jwk', alg: 'ES256', publicJwk: token.dpop.key.publicJwk as never },
    ...(token.dpop.nonce ? { nonce: token.dpop.nonce } : {}),
  };
}

/** Keeps the server's newest DPoP nonce for the next request (RFC 9449 §8). */
export function rememberDpopNonce(token: IssuanceToken, nonce: string | undefined): void {
  if (token.dpop && nonce) token.dpop.nonce = nonce;
}
