import { generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { resourceRequest } from '@openid4vc/oauth2';
import type { IssuerMetadataResult } from '@openid4vc/openid4vci';
import { CompactEncrypt, compactDecrypt, importJWK } from 'jose';
import { explainFailure, offerRefused } from './issuance-offer.ts';
import { dpopOptions, type IssuanceToken, issuanceCallbacks, rememberDpopNonce } from './issuer-client.ts';

/**
 * Credential Response encryption (OpenID4VCI §8.2, §10): when the issuer requires it, the wallet
 * sends a fresh ECDH-ES P-256 key per request and decrypts the answer; since 1.0 the request
 * itself is then encrypted to the issuer's `credential_request_encryption` key where the issuer
 * publishes one, so that the wallet's key cannot be swapped on the way. The libraries (0.4.6)
 * neither encrypt requests nor decrypt responses, so these calls go through their
 * `resourceRequest` (DPoP and its nonce retry included) and jose.
 */

const ENCRYPTIONS = ['A256GCM', 'A192GCM', 'A128GCM'];

export interface ResponseEncryption {
  privateJwk: JsonWebKey;
  /** The public key with its `alg`, as the request's credential_response_encryption.jwk. */
  publicJwk: JsonWebKey;
  enc: string;
}

interface EncryptionMetadata {
  alg_values_supported?: unknown;
  enc_values_supported?: unknown;
  encryption_required?: unknown;
  jwks?: { keys?: unknown };
}

const metadataOf = (metadata: IssuerMetadataResult, name: string) =>
  (metadata.credentialIssuer as Record<string, unknown>)[name] as EncryptionMetadata | undefined;

const encOf = (supported: unknown) =>
  Array.isArray(supported) ? ENCRYPTIONS.find((enc) => supported.includes(enc)) : undefined;

/** A fresh response key when the issuer requires encryption; null when it does not. */
export function responseEncryptionFor(metadata: IssuerMetadataResult): ResponseEncryption | null {
  const wanted = metadataOf(metadata, 'credential_response_encryption');
  if (wanted?.encryption_required !== true) return null;
  const algorithms = wanted.alg_values_supported;
  const enc = encOf(wanted.enc_values_supported);
  if (!Array.isArray(algorithms) || !algorithms.includes('ECDH-ES') || !enc) {
    throw offerRefused(
      'the issuer requires response encryption with algorithms this wallet does not use (ECDH-ES with AES-GCM)',
    );
  }
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    privateJwk: privateKey.export({ format: 'jwk' }),
    publicJwk: { ...publicKey.export({ format: 'jwk' }), alg: 'ECDH-ES', use: 'enc' } as JsonWebKey,
    enc,
  };
}

/** The issuer's request encryption key (ECDH-ES, P-256) and `enc`, when it publishes one. */
function requestEncryptionOf(
  metadata: IssuerMetadataResult,
): { jwk: JsonWebKey & { kid?: string }; enc: string } | null {
  const published = metadataOf(metadata, 'credential_request_encryption');
  const keys = published?.jwks?.keys;
  if (!Array.isArray(keys)) return null;
  const jwk = keys.find(
    (k: Record<string, unknown>) =>
      k['kty'] === 'EC' && k['crv'] === 'P-256' && (k['alg'] ?? 'ECDH-ES') === 'ECDH-ES',
  ) as (JsonWebKey & { kid?: string }) | undefined;
  const enc = encOf(published?.enc_values_supported);
  if (!jwk || !enc)
    throw offerRefused('the issuer publishes no request encryption key this wallet can use (ECDH-ES, P-256)');
  return { jwk, enc };
}

async function bodyOf(json: Record<string, unknown>, metadata: IssuerMetadataResult) {
  const encryption = requestEncryptionOf(metadata);
  if (!encryption) return { contentType: 'application/json', body: JSON.stringify(json) };
  const key = await importJWK(encryption.jwk as Record<string, unknown>, 'ECDH-ES');
  const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(json)))
    .setProtectedHeader({
      alg: 'ECDH-ES',
      enc: encryption.enc,
      ...(encryption.jwk.kid ? { kid: encryption.jwk.kid } : {}),
    })
    .encrypt(key);
  return { contentType: 'application/jwt', body: jwe };
}

export interface EncryptedAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * One encrypted call of the Credential or Deferred Credential Endpoint: the JSON request (with
 * credential_response_encryption), encrypted where the issuer publishes a key; the answer
 * decrypted with the response key. An error answer is plain JSON (§8.3.1).
 */
export async function encryptedCredentialCall(
  context: {
    outbound: Parameters<typeof issuanceCallbacks>[0];
    clientId: string;
    metadata: IssuerMetadataResult;
    token: IssuanceToken;
  },
  url: string,
  request: Record<string, unknown>,
  encryption: ResponseEncryption,
): Promise<EncryptedAnswer> {
  const { contentType, body } = await bodyOf(
    { ...request, credential_response_encryption: { jwk: encryption.publicJwk, enc: encryption.enc } },
    context.metadata,
  );
  const dpop = dpopOptions(context.token);
  let answer: Awaited<ReturnType<typeof resourceRequest>>;
  try {
    answer = await resourceRequest({
      callbacks: issuanceCallbacks(
        context.outbound,
        context.clientId,
        context.token.dpop ? [context.token.dpop.key] : [],
      ),
      accessToken: context.token.accessToken,
      url,
      requestOptions: { method: 'POST', headers: { 'content-type': contentType }, body },
      ...(dpop ? { dpop } : {}),
    });
  } catch (error) {
    throw explainFailure(error, 'the encrypted credential request failed');
  }
  rememberDpopNonce(context.token, answer.dpop?.nonce);
  const text = await answer.response.text();
  if (!answer.ok) {
    let error: Record<string, unknown> = {};
    try {
      error = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // judged by the status alone
    }
    return { status: answer.response.status, body: error };
  }
  try {
    const key = await importJWK(encryption.privateJwk as Record<string, unknown>, 'ECDH-ES');
    const { plaintext } = await compactDecrypt(text.trim(), key);
    return {
      status: answer.response.status,
      body: JSON.parse(new TextDecoder().decode(plaintext)) as Record<string, unknown>,
    };
  } catch {
    throw offerRefused('the issuer did not encrypt its answer to the key the wallet sent');
  }
}
