import { CompactEncrypt, importJWK, type JWK } from 'jose';
import { createLru } from '../lru.ts';
import type { ClientMetadata } from './oid4vp-schemas.ts';

/** Key management algorithms this wallet encrypts responses with (§8.3: the `alg` of the chosen JWK). */
export const KEY_ALGORITHMS = [
  'ECDH-ES',
  'ECDH-ES+A128KW',
  'ECDH-ES+A192KW',
  'ECDH-ES+A256KW',
  'RSA-OAEP-256',
];
export const CONTENT_ALGORITHMS = [
  'A128GCM',
  'A192GCM',
  'A256GCM',
  'A128CBC-HS256',
  'A192CBC-HS384',
  'A256CBC-HS512',
];

/**
 * Verifier encryption keys as imported, kept per JWK and algorithm: a response's key is checked
 * when the request arrives, again when the person decides, and used to encrypt; each import is a
 * WebCrypto round trip. Public keys only, bounded, least recently used out.
 */
const keptKeys = createLru<string, Awaited<ReturnType<typeof importJWK>>>(256);

async function importVerifierKey(jwk: JWK, alg: string) {
  const id = JSON.stringify([alg, jwk]);
  const hit = keptKeys.get(id);
  if (hit) return hit;
  const key = await importJWK(jwk, alg);
  keptKeys.set(id, key);
  return key;
}

export interface EncryptionChoice {
  jwk: JWK;
  alg: string;
  enc: string;
}

/**
 * The verifier key and algorithms to encrypt to (§8.3): the first key meant for encryption whose
 * `alg` this wallet supports and that imports with it (a key of another type or curve, or not a
 * valid point, is passed over as the wallet would fail on it only when answering), and the first
 * `enc` of encrypted_response_enc_values_supported this wallet supports (A128GCM when the verifier
 * names none). Undefined when nothing fits.
 */
export async function chooseEncryption(metadata: ClientMetadata): Promise<EncryptionChoice | undefined> {
  const wanted = metadata.encrypted_response_enc_values_supported ?? ['A128GCM'];
  const enc = wanted.find((e) => CONTENT_ALGORITHMS.includes(e));
  if (!enc) return undefined;
  const candidates = (metadata.jwks?.keys ?? []).filter(
    (k) =>
      (k.use === undefined || k.use === 'enc') && typeof k.alg === 'string' && KEY_ALGORITHMS.includes(k.alg),
  ) as JWK[];
  for (const jwk of candidates) {
    try {
      await importVerifierKey(jwk, jwk.alg!);
      return { jwk, alg: jwk.alg!, enc };
    } catch {
      // Not usable with its alg; the next key may be.
    }
  }
  return undefined;
}

/** An unsigned, encrypted JWT whose payload is the response parameters (§8.3). */
export async function encryptResponse(
  parameters: Record<string, unknown>,
  choice: EncryptionChoice,
): Promise<string> {
  const key = await importVerifierKey(choice.jwk, choice.alg);
  const header = { alg: choice.alg, enc: choice.enc, ...(choice.jwk.kid ? { kid: choice.jwk.kid } : {}) };
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(parameters)))
    .setProtectedHeader(header)
    .encrypt(key);
}
