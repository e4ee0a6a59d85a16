import { createECDH, createHash, createPrivateKey, hkdfSync, type KeyObject } from 'node:crypto';
import { CompactEncrypt, compactDecrypt, decodeProtectedHeader, importJWK } from 'jose';
import { CofferError } from '../errors.ts';

/**
 * Encrypted Credential Requests and Responses (OpenID4VCI 1.0 §10): a request to the Credential
 * or Deferred Credential Endpoint may come as a compact JWE (`application/jwt`) to the issuer's
 * `credential_request_encryption` key; a request carrying `credential_response_encryption` is
 * answered with a compact JWE to the wallet's key. Both with ECDH-ES and AES-GCM; no `zip`.
 */

export const ENC_VALUES = ['A128GCM', 'A256GCM'];
const ALG = 'ECDH-ES';

/** The issuer's request encryption key: a P-256 ECDH-ES key, its public JWK published with its kid. */
export interface RequestEncryptionKey {
  privateKey: KeyObject;
  publicJwk: { kty: 'EC'; crv: 'P-256'; x: string; y: string; kid: string; use: 'enc'; alg: 'ECDH-ES' };
}

/** The order n of P-256. */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/**
 * The request encryption key of one issuer, derived rather than stored: HKDF-SHA-256 of a secret
 * derived from the master key (`issuer-request-encryption/v1`), per client id, gives 48 bytes
 * that are reduced to a P-256 private scalar in [1, n-1] (FIPS 186-5 A.2.1, "extra random bits"),
 * so the key is the same on every instance and after every restart, needs no column and no
 * migration, and is never shared between issuers. Rotating it means a new purpose label. It only
 * protects requests in transit (the wallet's key for the answer, its proofs); nothing at rest is
 * encrypted to it, so `coffer master-key rotate` has nothing to re-encrypt: the key (and its kid)
 * simply changes with the master key, and a wallet holding metadata older than that (cached up to
 * 60 s) is told its request is not encrypted to this issuer's key, fetches the metadata again and
 * retries.
 */
export function deriveRequestEncryptionKey(secret: Uint8Array, clientId: number): RequestEncryptionKey {
  const okm = Buffer.from(
    hkdfSync('sha256', secret, new Uint8Array(0), `issuers/${clientId}/request-encryption`, 48),
  );
  const scalar = (BigInt(`0x${okm.toString('hex')}`) % (P256_ORDER - 1n)) + 1n;
  const d = Buffer.from(scalar.toString(16).padStart(64, '0'), 'hex');
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey();
  const x = point.subarray(1, 33).toString('base64url');
  const y = point.subarray(33, 65).toString('base64url');
  const privateKey = createPrivateKey({
    key: { kty: 'EC', crv: 'P-256', x, y, d: d.toString('base64url') },
    format: 'jwk',
  });
  // RFC 7638 thumbprint: the members in lexicographic order, no white space.
  const kid = createHash('sha256')
    .update(JSON.stringify({ crv: 'P-256', kty: 'EC', x, y }))
    .digest('base64url');
  return { privateKey, publicJwk: { kty: 'EC', crv: 'P-256', x, y, kid, use: 'enc', alg: ALG } };
}

/** The two metadata parameters (§12.2.4): encryption is offered, never required. */
export function encryptionMetadata(key: RequestEncryptionKey) {
  return {
    credential_request_encryption: {
      jwks: { keys: [key.publicJwk] },
      enc_values_supported: ENC_VALUES,
      encryption_required: false,
    },
    credential_response_encryption: {
      alg_values_supported: [ALG],
      enc_values_supported: ENC_VALUES,
      encryption_required: false,
    },
  };
}

const encryptionError = (why: string) =>
  new CofferError('invalid_encryption_parameters', why, { status: 400 });

/**
 * An encrypted request opened: the JWE must be ECDH-ES to this issuer's key (its kid), with an
 * `enc` the metadata lists; what it carries must be a JSON object (the request, validated after).
 */
export async function openEncryptedRequest(
  key: RequestEncryptionKey,
  jwe: string,
): Promise<Record<string, unknown>> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jwe.trim());
  } catch {
    throw encryptionError('The request body is not a compact JWE.');
  }
  if (header.alg !== ALG) throw encryptionError(`The request must be encrypted with alg ${ALG}.`);
  if (typeof header.enc !== 'string' || !ENC_VALUES.includes(header.enc)) {
    throw encryptionError(`The request must be encrypted with enc ${ENC_VALUES.join(' or ')}.`);
  }
  if (header.kid !== key.publicJwk.kid) {
    throw encryptionError("The request is not encrypted to this issuer's key (kid).");
  }
  if (header.zip !== undefined) throw encryptionError('Compressed requests (zip) are not supported.');
  let plaintext: Uint8Array;
  try {
    ({ plaintext } = await compactDecrypt(jwe.trim(), key.privateKey, {
      keyManagementAlgorithms: [ALG],
      contentEncryptionAlgorithms: ENC_VALUES,
    }));
  } catch {
    throw encryptionError("The request cannot be decrypted with this issuer's key.");
  }
  let request: unknown;
  try {
    request = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plaintext));
  } catch {
    throw new CofferError('invalid_credential_request', 'The decrypted request is not JSON.', {
      status: 400,
    });
  }
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new CofferError('invalid_credential_request', 'The decrypted request is not a JSON object.', {
      status: 400,
    });
  }
  return request as Record<string, unknown>;
}

/** How to encrypt the answer: the wallet's public key, imported, and its enc. */
export interface ResponseEncryption {
  key: Awaited<ReturnType<typeof importJWK>>;
  kid: string | undefined;
  enc: string;
}

const ENCRYPTION_CURVES: Record<string, string[]> = {
  EC: ['P-256', 'P-384', 'P-521'],
  OKP: ['X25519', 'X448'],
};

/**
 * The request's `credential_response_encryption` (§8.2) checked before anything is issued: a
 * public EC or OKP key for ECDH-ES (its `alg` present, §10), an `enc` the metadata lists, no
 * `zip`. Null when the request asks for no encryption.
 */
export async function responseEncryptionOf(requested: unknown): Promise<ResponseEncryption | null> {
  if (requested === undefined) return null;
  const { jwk, enc, zip, alg } = (requested ?? {}) as {
    jwk?: Record<string, unknown>;
    enc?: unknown;
    zip?: unknown;
    alg?: unknown;
  };
  if (typeof enc !== 'string' || !ENC_VALUES.includes(enc)) {
    throw encryptionError(`credential_response_encryption.enc must be ${ENC_VALUES.join(' or ')}.`);
  }
  if (zip !== undefined) throw encryptionError('Compressed responses (zip) are not supported.');
  if (typeof jwk !== 'object' || jwk === null)
    throw encryptionError('credential_response_encryption.jwk is missing.');
  const curves = ENCRYPTION_CURVES[String(jwk['kty'])];
  if (!curves?.includes(String(jwk['crv']))) {
    throw encryptionError('credential_response_encryption.jwk must be an EC or OKP key agreement key.');
  }
  if (jwk['d'] !== undefined)
    throw encryptionError('credential_response_encryption.jwk must be a public key.');
  if (jwk['use'] !== undefined && jwk['use'] !== 'enc') {
    throw encryptionError('credential_response_encryption.jwk is not an encryption key (use).');
  }
  // 1.0 puts alg in the JWK (§10); drafts up to 15 (and @openid4vc/openid4vci 0.4's request
  // type) put it beside the JWK. Either names ECDH-ES; they must not disagree.
  const named = jwk['alg'] ?? alg;
  if (named !== ALG || (alg !== undefined && alg !== named)) {
    throw encryptionError(`credential_response_encryption.jwk must carry alg ${ALG} (§10).`);
  }
  let key: ResponseEncryption['key'];
  try {
    key = await importJWK(jwk, ALG);
  } catch {
    throw encryptionError('credential_response_encryption.jwk is not a valid public key.');
  }
  return { key, kid: typeof jwk['kid'] === 'string' ? jwk['kid'] : undefined, enc };
}

/** The answer as a compact JWE to the wallet's key (sent as `application/jwt`). */
export function sealResponse(encryption: ResponseEncryption, body: object): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(body)))
    .setProtectedHeader({
      alg: ALG,
      enc: encryption.enc,
      ...(encryption.kid !== undefined ? { kid: encryption.kid } : {}),
    })
    .encrypt(encryption.key);
}
