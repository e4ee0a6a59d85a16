import { createHash, X509Certificate } from 'node:crypto';
import { resolveOpenid4vpAuthorizationRequest } from '@openid4vc/openid4vp';
import {
  CompactEncrypt,
  calculateJwkThumbprint,
  compactVerify,
  decodeProtectedHeader,
  importJWK,
  type JWK,
} from 'jose';

/**
 * A wallet that is not Coffer's code: it fetches a verifier's request object over HTTP (POST,
 * §5.10), has @openid4vc/openid4vp check it (JAR, client identifier prefix against the x5c leaf)
 * with signatures checked by jose, and answers with a vp_token it is handed, encrypted with jose
 * to the key the request named (direct_post.jwt) or as a plain form (direct_post).
 */

// biome-ignore lint/suspicious/noExplicitAny: request objects are arbitrary JSON
type Json = any;

export interface ResolvedRequest {
  /** The request object's claims after the library checked them. */
  payload: Json;
  clientId: string;
  jwt: string;
  /** The x5c leaf of the signed request object. */
  leaf: X509Certificate;
}

/** Network access of the wallet: over the test's TLS front (see tls-front.ts). */
let walletFetch: typeof fetch = fetch;
export function useFetch(fetcher: typeof fetch): void {
  walletFetch = fetcher;
}

export const callbacks = {
  hash: (data: Uint8Array, alg: string) =>
    createHash(alg.replace('-', '').toLowerCase()).update(data).digest(),
  fetch: ((input: string | URL | Request, init?: RequestInit) => walletFetch(input, init)) as typeof fetch,
  getX509CertificateMetadata: (certificate: string) => {
    const parsed = new X509Certificate(Buffer.from(certificate, 'base64'));
    const names = (parsed.subjectAltName ?? '')
      .split(', ')
      .filter((name) => name.startsWith('DNS:'))
      .map((name) => name.slice(4));
    return { sanDnsNames: names, sanUriNames: [] };
  },
  verifyJwt: async (signer: Json, { compact }: { compact: string }) => {
    if (signer.method !== 'x5c') return { verified: false as const };
    const leaf = new X509Certificate(Buffer.from(signer.x5c[0], 'base64'));
    try {
      await compactVerify(compact, leaf.publicKey, { algorithms: [signer.alg] });
      return { verified: true as const, signerJwk: leaf.publicKey.export({ format: 'jwk' }) as Json };
    } catch {
      return { verified: false as const };
    }
  },
  decryptJwe: async () => {
    throw new Error('not used');
  },
};

/**
 * Reads an openid4vp:// request as a phone wallet does: the request object is fetched by POST
 * (§5.10, with the wallet's nonce and metadata), then given to @openid4vc/openid4vp, which checks
 * the JAR signature, the client identifier prefix against the x5c leaf and the wallet nonce.
 */
export async function resolveRequest(
  authorizationRequest: string,
  options: { walletNonce?: string; walletMetadata?: Record<string, unknown> } = {},
): Promise<ResolvedRequest> {
  const url = new URL(authorizationRequest);
  const clientId = url.searchParams.get('client_id')!;
  const fetched = await walletFetch(url.searchParams.get('request_uri')!, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/oauth-authz-req+jwt',
    },
    body: new URLSearchParams({
      ...(options.walletNonce ? { wallet_nonce: options.walletNonce } : {}),
      ...(options.walletMetadata ? { wallet_metadata: JSON.stringify(options.walletMetadata) } : {}),
    }).toString(),
  });
  if (fetched.status !== 200)
    throw new Error(`request_uri answered ${fetched.status}: ${await fetched.text()}`);
  if (fetched.headers.get('content-type') !== 'application/oauth-authz-req+jwt') {
    throw new Error(`request_uri answered ${fetched.headers.get('content-type')}`);
  }
  const jwt = await fetched.text();
  return resolved(
    jwt,
    await resolveOpenid4vpAuthorizationRequest({
      authorizationRequestPayload: { client_id: clientId, request: jwt } as Json,
      ...(options.walletNonce ? { wallet: { expectedNonce: options.walletNonce } } : {}),
      callbacks: callbacks as Json,
    }),
  );
}

/**
 * Reads a signed request handed over by the Digital Credentials API (OpenID4VP Appendix A,
 * `openid4vp-v1-signed`) as a browser's wallet does: @openid4vc/openid4vp checks the JAR, the
 * client identifier against the x5c leaf, and that the calling page's origin is expected.
 */
export async function resolveDcApiRequest(jwt: string, origin: string): Promise<ResolvedRequest> {
  return resolved(
    jwt,
    await resolveOpenid4vpAuthorizationRequest({
      authorizationRequestPayload: { request: jwt } as Json,
      origin,
      callbacks: callbacks as Json,
    }),
  );
}

function resolved(
  jwt: string,
  resolution: Awaited<ReturnType<typeof resolveOpenid4vpAuthorizationRequest>>,
): ResolvedRequest {
  const header = decodeProtectedHeader(jwt);
  return {
    payload: resolution.authorizationRequestPayload,
    clientId: (resolution.client as Json).clientId ?? (resolution.client as Json).effective,
    jwt,
    leaf: new X509Certificate(Buffer.from((header.x5c as string[])[0]!, 'base64')),
  };
}

/** The thumbprint of the key the request says to encrypt to (the mdoc transcript names it). */
export async function encryptionThumbprint(request: ResolvedRequest): Promise<Uint8Array> {
  const jwk = request.payload.client_metadata.jwks.keys[0] as JWK;
  return Buffer.from(await calculateJwkThumbprint(jwk, 'sha256'), 'base64url');
}

/** Encrypts the response parameters to the request's key (§8.3), A128GCM unless told otherwise. */
export async function encryptResponse(
  request: ResolvedRequest,
  parameters: Record<string, unknown>,
  enc = 'A128GCM',
): Promise<string> {
  const jwk = request.payload.client_metadata.jwks.keys[0] as JWK;
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(parameters)))
    .setProtectedHeader({ alg: 'ECDH-ES', enc, ...(jwk.kid ? { kid: jwk.kid } : {}) })
    .encrypt(await importJWK(jwk, 'ECDH-ES'));
}

/** Posts a form to the request's response_uri, as a wallet does; returns status and JSON. */
export async function postForm(url: string, form: Record<string, string>) {
  const response = await walletFetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  let body: Json = null;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, body };
}

/** Answers a resolved request with a vp_token, encrypted when its response mode says so. */
export async function answer(
  request: ResolvedRequest,
  vpToken: Record<string, unknown[]>,
  extra: Record<string, unknown> = {},
) {
  const { response_mode: mode, response_uri: responseUri, state } = request.payload;
  const parameters = { vp_token: vpToken, ...(state ? { state } : {}), ...extra };
  if (mode === 'direct_post.jwt') {
    return postForm(responseUri, { response: await encryptResponse(request, parameters) });
  }
  return postForm(responseUri, {
    vp_token: JSON.stringify(vpToken),
    ...(state ? { state } : {}),
    ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, String(v)])),
  });
}
