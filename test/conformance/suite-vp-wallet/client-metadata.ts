import { calculateJwkThumbprint, importJWK, type JWK } from 'jose';
import { fail, isObject, type Json, type WalletEnv } from './env.ts';

/**
 * The suite's conditions on the verifier's `client_metadata` (OpenID4VP 1.0 §5.1, §8.3, Appendix
 * B; HAIP §5): its members, `vp_formats_supported`, and the response encryption keys.
 */

const metadataOf = (env: WalletEnv): Record<string, Json> => {
  const metadata = env.effective.client_metadata;
  if (metadata === undefined)
    fail('client_metadata is not in the request, and it must carry vp_formats_supported');
  if (!isObject(metadata)) fail('client_metadata is not a JSON object');
  return metadata;
};

/**
 * VP1FinalCheckForUnexpectedParametersInVpClientMetadata (§5.1): only jwks, vp_formats_supported
 * and encrypted_response_enc_values_supported — the parameters §5.1 lets client_metadata carry;
 * wallets must ignore any other.
 */
export function checkForUnexpectedParametersInVpClientMetadata(env: WalletEnv) {
  const allowed = ['jwks', 'vp_formats_supported', 'encrypted_response_enc_values_supported'];
  const unknown = Object.keys(metadataOf(env)).filter((name) => !allowed.includes(name));
  if (unknown.length)
    fail(`client_metadata carries parameters §5.1 does not define for it: ${unknown.join(', ')}`);
}

/** JWS algorithm names the suite's JOSE library knows (EC, EdDSA, HMAC and RSA families, ML-DSA). */
const JWS_ALGORITHMS = [
  'ES256',
  'ES256K',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'Ed448',
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ML-DSA-44',
  'ML-DSA-65',
  'ML-DSA-87',
];
/** COSE signature algorithms (RFC 9053, RFC 9864 and the IANA registry). */
const COSE_ALGORITHMS = [
  -7, -8, -9, -19, -35, -36, -37, -38, -39, -46, -47, -48, -49, -50, -51, -52, -53, -257, -258, -259, -260,
  -265, -266, -267, -268, -65535,
];

function checkOptionalAlgorithms(
  parent: Record<string, Json>,
  name: string,
  known: (value: unknown) => boolean,
) {
  const values = parent[name];
  if (values === undefined) return;
  if (!Array.isArray(values) || values.length === 0) fail(`${name} must be a non-empty array`);
  const unknown = values.filter((value) => !known(value));
  if (unknown.length) fail(`${name} holds algorithms that are not registered: ${JSON.stringify(unknown)}`);
}

/**
 * VP1FinalValidateVpFormatsSupportedInClientMetadata (B.2.2, B.3.4): vp_formats_supported is an
 * object naming the configured format; its algorithm lists, when given, are non-empty arrays of
 * registered JWS names (dc+sd-jwt) or COSE integers (mso_mdoc).
 */
export function validateVpFormatsSupportedInClientMetadata(env: WalletEnv) {
  const formats = metadataOf(env).vp_formats_supported;
  if (formats === undefined) fail('client_metadata has no vp_formats_supported');
  if (!isObject(formats)) fail('vp_formats_supported is not an object');
  if (env.variant.credentialFormat === 'sd_jwt_vc') {
    const sdJwt = formats['dc+sd-jwt'];
    if (!isObject(sdJwt)) fail("vp_formats_supported has no 'dc+sd-jwt' object");
    const jws = (value: unknown) => typeof value === 'string' && JWS_ALGORITHMS.includes(value);
    checkOptionalAlgorithms(sdJwt, 'sd-jwt_alg_values', jws);
    checkOptionalAlgorithms(sdJwt, 'kb-jwt_alg_values', jws);
  } else {
    const mdoc = formats['mso_mdoc'];
    if (!isObject(mdoc)) fail("vp_formats_supported has no 'mso_mdoc' object");
    const cose = (value: unknown) => typeof value === 'number' && COSE_ALGORITHMS.includes(value);
    checkOptionalAlgorithms(mdoc, 'issuerauth_alg_values', cose);
    checkOptionalAlgorithms(mdoc, 'deviceauth_alg_values', cose);
  }
}

const keysOf = (env: WalletEnv): Json[] => {
  const jwks = metadataOf(env).jwks;
  if (!isObject(jwks) || !Array.isArray(jwks.keys)) fail('client_metadata.jwks.keys is not an array');
  return jwks.keys;
};

/** VP1FinalCheckForKeyIdInClientMetadataJWKs (§5.1): every key has a kid, unique in the set. */
export function checkForKeyIdInClientMetadataJwks(env: WalletEnv) {
  const kids = keysOf(env).map((key, index) =>
    isObject(key) && typeof key.kid === 'string'
      ? key.kid
      : fail(`key ${index} of client_metadata.jwks has no kid`),
  );
  if (new Set(kids).size !== kids.length) fail('kids in client_metadata.jwks are not unique');
}

const usableForEncryption = (key: Json) => isObject(key) && (key.use === undefined || key.use === 'enc');

/** VP1FinalValidateClientMetadataJwksForEncryptedResponse (§8.3): keys with alg, one usable for encryption. */
export function validateClientMetadataJwksForEncryptedResponse(env: WalletEnv) {
  const keys = keysOf(env);
  if (keys.length === 0) fail('client_metadata.jwks.keys is empty');
  for (const [index, key] of keys.entries()) {
    if (!isObject(key) || typeof key.alg !== 'string')
      fail(`key ${index} of client_metadata.jwks has no alg`);
  }
  if (!keys.some(usableForEncryption)) fail('no key of client_metadata.jwks may be used for encryption');
}

/** MapJwksToValidationLocation (ValidateJwksSequence): the JWKS to validate is an object. */
export function mapJwksToValidationLocation(env: WalletEnv) {
  if (!isObject(metadataOf(env).jwks)) fail('client_metadata.jwks is not an object');
}

/** EnsureJwksHasNoPrivateOrSymmetricKeyMaterial. */
export function ensureJwksHasNoPrivateOrSymmetricKeyMaterial(env: WalletEnv) {
  for (const [index, key] of keysOf(env).entries()) {
    if (key.kty === 'oct') fail(`key ${index} is a symmetric key`);
    const secret = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'].filter((name) => name in key);
    if (secret.length) fail(`key ${index} carries private members ${secret.join(', ')}`);
  }
}

const base64url = (value: unknown) => typeof value === 'string' && /^[A-Za-z0-9_-]+$/.test(value);

/** ValidateJwksStructure: a keys array of objects with kty and the members of their type, unpadded base64url. */
export function validateJwksStructure(env: WalletEnv) {
  const needed: Record<string, string[]> = { RSA: ['n', 'e'], EC: ['crv', 'x', 'y'], OKP: ['crv', 'x'] };
  for (const [index, key] of keysOf(env).entries()) {
    if (!isObject(key) || typeof key.kty !== 'string') fail(`key ${index} has no kty`);
    for (const member of needed[key.kty] ?? []) {
      if (key[member] === undefined) fail(`key ${index} (${key.kty}) has no ${member}`);
      if (member !== 'crv' && !base64url(key[member]))
        fail(`key ${index}'s ${member} is not unpadded base64url`);
    }
  }
}

const SUPPORTED_CURVES: Record<string, string[]> = {
  EC: ['P-256', 'P-384', 'P-521'],
  OKP: ['Ed25519', 'X25519'],
  RSA: [],
};
const KNOWN_ALGORITHMS = [
  ...JWS_ALGORITHMS,
  'ECDH-ES',
  'ECDH-ES+A128KW',
  'ECDH-ES+A192KW',
  'ECDH-ES+A256KW',
  'RSA-OAEP',
  'RSA-OAEP-256',
];
const isSupported = (key: Json) =>
  key.kty in SUPPORTED_CURVES && (key.kty === 'RSA' || SUPPORTED_CURVES[key.kty]!.includes(key.crv));

/** ParseUsableJwksKeys: every key of a supported type and curve parses with a JOSE library (jose). */
export async function parseUsableJwksKeys(env: WalletEnv) {
  for (const [index, key] of keysOf(env).entries()) {
    if (!isSupported(key)) continue;
    try {
      const { alg: _alg, use: _use, key_ops: _ops, ...material } = key;
      await importJWK(
        material as JWK,
        key.kty === 'OKP' ? key.crv : key.kty === 'EC' ? 'ECDH-ES' : 'RSA-OAEP',
      );
    } catch (error) {
      fail(`key ${index} does not parse: ${(error as Error).message}`);
    }
  }
}

/** WarnOnUnusableJwksKeys: no key of an unsupported type, curve or unknown alg. */
export function warnOnUnusableJwksKeys(env: WalletEnv) {
  for (const [index, key] of keysOf(env).entries()) {
    if (!isSupported(key)) fail(`key ${index} has an unsupported kty or curve (${key.kty} ${key.crv ?? ''})`);
    if (key.alg !== undefined && !KNOWN_ALGORITHMS.includes(key.alg))
      fail(`key ${index} has an unknown alg ${key.alg}`);
  }
}

/** ValidateVpClientMetadataEncryptionForHaip (HAIP §5, §8.3): A128GCM and A256GCM offered, an ECDH-ES P-256 key. */
export function validateVpClientMetadataEncryptionForHaip(env: WalletEnv) {
  const metadata = metadataOf(env);
  const encs = metadata.encrypted_response_enc_values_supported;
  if (!Array.isArray(encs)) fail('encrypted_response_enc_values_supported is missing (HAIP §5)');
  if (!encs.includes('A128GCM') || !encs.includes('A256GCM')) {
    fail(`encrypted_response_enc_values_supported ${JSON.stringify(encs)} lacks A128GCM or A256GCM`);
  }
  if (!keysOf(env).some((key) => key.kty === 'EC' && key.crv === 'P-256' && key.alg === 'ECDH-ES')) {
    fail('client_metadata.jwks has no ECDH-ES key on P-256');
  }
}

/**
 * VP1FinalCheckEncryptionKeyNotReused (HAIP §5, §8.3): no encryption key of this request was in
 * an earlier authorization request (the world remembers every one of the plan's); then it is remembered.
 */
export async function checkEncryptionKeyNotReused(env: WalletEnv) {
  const thumbprints = await Promise.all(
    keysOf(env)
      .filter(usableForEncryption)
      .map((key) => calculateJwkThumbprint(key as JWK, 'sha256')),
  );
  const reused = thumbprints.find((thumbprint) => env.world.seenEncryptionKeys.has(thumbprint));
  if (reused) fail(`the response encryption key ${reused} was in an earlier authorization request`);
  for (const thumbprint of thumbprints) env.world.seenEncryptionKeys.add(thumbprint);
}
