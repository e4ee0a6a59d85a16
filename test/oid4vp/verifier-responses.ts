import {
  type Openid4vpAuthorizationRequest,
  parseOpenid4vpAuthorizationResponse,
} from '@openid4vc/openid4vp';
import { type CompactJWEHeaderParameters, compactDecrypt, decodeProtectedHeader, type JWK } from 'jose';
import type { Key } from './certificates.ts';

/**
 * The test verifier's response side (OpenID4VP §8): what arrives at its response_uri, decrypted
 * with jose and parsed by @openid4vc/openid4vp, and what comes back in a redirect's fragment.
 */

export const ENC = 'A256GCM';

/** What the wallet posted to the response_uri, and what the verifier made of it. */
export interface Received {
  form: Record<string, string>;
  /** The protected header of the JWE, for direct_post.jwt. */
  jweHeader: CompactJWEHeaderParameters | null;
  /** The response parameters, decrypted where they were encrypted. */
  parameters: Record<string, unknown>;
  error: string | null;
  state: string | null;
  /** The vp_token as @openid4vc/openid4vp parsed it (successful responses only). */
  vpToken: Record<string, unknown[]> | null;
  /** What the verifier answered: where the browser should go next. */
  redirectUri: string | null;
  /** Why the verifier refused the response (answered 400), if it did. */
  refusal: string | null;
}

export interface EncryptionKey {
  privateKey: Key;
  publicJwk: JWK;
}

/** What a response is read against: the request as the verifier sent it, and its key. */
export interface Asked {
  payload: Record<string, unknown>;
  encryptionKey: EncryptionKey | null;
}

const emptyReceived = (form: Record<string, string>, parameters: Record<string, unknown>): Received => ({
  form,
  jweHeader: null,
  parameters,
  error: typeof parameters['error'] === 'string' ? parameters['error'] : null,
  state: typeof parameters['state'] === 'string' ? parameters['state'] : null,
  vpToken: null,
  redirectUri: null,
  refusal: null,
});

/** Decrypts a direct_post.jwt response with the request's key, checking the JWE header (§8.3). */
async function decryptResponse(asked: Asked, jwe: string) {
  const key = asked.encryptionKey;
  if (!key) throw new Error('this transaction did not ask for an encrypted response');
  const header = decodeProtectedHeader(jwe) as CompactJWEHeaderParameters;
  if (header.alg !== key.publicJwk.alg)
    throw new Error(`JWE alg ${header.alg}, expected ${key.publicJwk.alg}`);
  if (header.enc !== ENC) throw new Error(`JWE enc ${header.enc}, expected ${ENC}`);
  if (header.kid !== key.publicJwk.kid)
    throw new Error(`JWE kid ${header.kid}, expected ${key.publicJwk.kid}`);
  const { plaintext } = await compactDecrypt(jwe, key.privateKey, {
    keyManagementAlgorithms: [key.publicJwk.alg!],
    contentEncryptionAlgorithms: [ENC],
  });
  return { header, payload: new TextDecoder().decode(plaintext) };
}

/**
 * What the response endpoint does with a POST: decrypt, then let the library parse a successful
 * response. The library parses only successful responses (vp_token), so error responses (§8.5)
 * are read by hand.
 */
export async function readResponse(asked: Asked, form: Record<string, string>): Promise<Received> {
  let received = emptyReceived(form, form);
  try {
    if (asked.payload['response_mode'] === 'direct_post.jwt' && form['response'] !== undefined) {
      if (Object.keys(form).length !== 1) throw new Error('direct_post.jwt carries only `response`');
      const { header, payload } = await decryptResponse(asked, form['response']);
      received = {
        ...emptyReceived(form, JSON.parse(payload) as Record<string, unknown>),
        jweHeader: header,
      };
    }
    if (received.error !== null) return received;
    const parsed = await parseOpenid4vpAuthorizationResponse({
      authorizationResponse: form,
      authorizationRequestPayload: asked.payload as Openid4vpAuthorizationRequest,
      callbacks: {
        decryptJwe: async (jwe) => ({
          decrypted: true,
          decryptionJwk: asked.encryptionKey!.publicJwk as never,
          payload: (await decryptResponse(asked, jwe)).payload,
        }),
        verifyJwt: async () => ({ verified: false }),
      },
    });
    if (parsed.type !== 'dcql') throw new Error('not a DCQL response');
    received.vpToken = vpTokenArrays(received.parameters['vp_token']);
  } catch (error) {
    received.refusal = (error as Error).message;
  }
  return received;
}

/**
 * The library accepts a bare presentation where 1.0 requires an array (§8.1), so the vp_token
 * is read again here: an object of non-empty arrays.
 */
function vpTokenArrays(value: unknown): Record<string, unknown[]> {
  const token = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  if (token === null || typeof token !== 'object' || Array.isArray(token)) {
    throw new Error('vp_token must be a JSON object keyed by DCQL query id');
  }
  for (const [id, presentations] of Object.entries(token)) {
    if (!Array.isArray(presentations) || presentations.length === 0) {
      throw new Error(`vp_token.${id} must be a non-empty array of presentations`);
    }
  }
  return token as Record<string, unknown[]>;
}

/** A response in the redirect's fragment, read by hand: the library (0.4.6) does not parse them. */
export function readFragment(asked: Asked, location: string): Received {
  const url = new URL(location);
  const received = emptyReceived({}, Object.fromEntries(new URLSearchParams(url.hash.slice(1))));
  try {
    if (`${url.origin}${url.pathname}` !== asked.payload['redirect_uri']) {
      throw new Error(`the response came to ${url.origin}${url.pathname}, not the redirect_uri`);
    }
    if (url.search) throw new Error('response parameters belong in the fragment, not the query');
    if (received.error === null) received.vpToken = vpTokenArrays(received.parameters['vp_token']);
  } catch (error) {
    received.refusal = (error as Error).message;
  }
  return received;
}
