import { constants, createPublicKey, type JsonWebKey, type KeyObject, sign, verify } from 'node:crypto';

/**
 * Compact JWS (RFC 7515) signed and checked synchronously with node:crypto, for the hot paths
 * only: the tokens Coffer signs and checks itself, and DPoP proofs. jose, which the rest of Coffer
 * uses, works through WebCrypto: each operation is a thread-pool round trip and each embedded key
 * an import, about twice the CPU of these calls (measured in the closing note of issue 19).
 * Everything here is deliberately narrow: six asymmetric algorithm names, no `crit` extensions, no
 * unencoded payloads, JSON objects only.
 */

/** `Ed25519` is RFC 9864's fully specified name for EdDSA over Ed25519 (what oauth4webapi sends). */
export type JwsAlgorithm = 'ES256' | 'ES384' | 'ES512' | 'EdDSA' | 'Ed25519' | 'PS256';

export type JwsErrorCode = 'malformed' | 'key' | 'signature';

export class JwsError extends Error {
  readonly code: JwsErrorCode;
  constructor(code: JwsErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

interface AlgorithmRule {
  hash: string | null;
  /** What the key must be for this algorithm (RFC 7518 §3.4, §3.5; RFC 8037). */
  fits(key: KeyObject): boolean;
  /** ECDSA signatures are R || S, each the size of the curve order (RFC 7518 §3.4). */
  signatureLength?: number;
  options?: { padding: number; saltLength: number };
}

const curveOf = (key: KeyObject) => key.asymmetricKeyDetails?.namedCurve;

const RULES: Record<JwsAlgorithm, AlgorithmRule> = {
  ES256: { hash: 'sha256', signatureLength: 64, fits: (k) => curveOf(k) === 'prime256v1' },
  ES384: { hash: 'sha384', signatureLength: 96, fits: (k) => curveOf(k) === 'secp384r1' },
  ES512: { hash: 'sha512', signatureLength: 132, fits: (k) => curveOf(k) === 'secp521r1' },
  EdDSA: { hash: null, fits: (k) => k.asymmetricKeyType === 'ed25519' },
  Ed25519: { hash: null, fits: (k) => k.asymmetricKeyType === 'ed25519' },
  PS256: {
    hash: 'sha256',
    fits: (k) =>
      (k.asymmetricKeyType === 'rsa' || k.asymmetricKeyType === 'rsa-pss') &&
      (k.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048,
    options: { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
  },
};

export const isJwsAlgorithm = (alg: unknown): alg is JwsAlgorithm =>
  typeof alg === 'string' && Object.hasOwn(RULES, alg);

export interface DecodedJws {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  /** The header segment as received: equal segments are equal headers, a cache key. */
  encodedHeader: string;
  signingInput: string;
  signature: Buffer;
}

const COMPACT = /^([\w-]+)\.([\w-]+)\.([\w-]+)$/;

function jsonObject(segment: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw new JwsError('malformed', `The ${what} is not base64url-encoded JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new JwsError('malformed', `The ${what} is not a JSON object.`);
  return value as Record<string, unknown>;
}

/** Splits and parses a compact JWS; nothing is verified yet. */
export function decodeCompactJws(token: string): DecodedJws {
  const match = COMPACT.exec(token);
  if (!match) throw new JwsError('malformed', 'Not a compact JWS.');
  const header = jsonObject(match[1]!, 'header');
  // No extension is understood here, so none may be critical (RFC 7515 §4.1.11); that includes
  // RFC 7797's unencoded payloads.
  if ('crit' in header || 'b64' in header) throw new JwsError('malformed', 'The header has extensions.');
  return {
    header,
    payload: jsonObject(match[2]!, 'payload'),
    encodedHeader: match[1]!,
    signingInput: `${match[1]}.${match[2]}`,
    signature: Buffer.from(match[3]!, 'base64url'),
  };
}

/** The public key of a JWK; refuses anything else (a private or symmetric key). */
export function publicKeyFromJwk(jwk: unknown): KeyObject {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk))
    throw new JwsError('key', 'The key is not a JWK.');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw new JwsError('key', 'The JWK is not a usable public key.');
  }
  return key;
}

// node:crypto takes ECDSA signatures as R || S only through an options object, and that form
// costs 17 µs more per call than a bare KeyObject with DER (measured: verify 60 → 44 µs, sign 34
// → 17 µs). The conversion is done here instead: R and S become ASN.1 INTEGERs in a SEQUENCE.
function derInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const value = bytes.subarray(start);
  return value[0]! & 0x80
    ? Buffer.concat([Buffer.from([2, value.length + 1, 0]), value])
    : Buffer.concat([Buffer.from([2, value.length]), value]);
}

function rawToDer(signature: Buffer): Buffer {
  const half = signature.length / 2;
  const body = Buffer.concat([derInteger(signature.subarray(0, half)), derInteger(signature.subarray(half))]);
  const length = body.length < 0x80 ? Buffer.from([body.length]) : Buffer.from([0x81, body.length]);
  return Buffer.concat([Buffer.from([0x30]), length, body]);
}

/** The DER signature OpenSSL just made, as R || S of `size` bytes each. */
function derToRaw(der: Buffer, size: number): Buffer {
  let offset = der[1]! & 0x80 ? 3 : 2;
  const raw = Buffer.alloc(size * 2);
  for (const half of [0, 1]) {
    const length = der[offset + 1]!;
    let value = der.subarray(offset + 2, offset + 2 + length);
    while (value.length > size && value[0] === 0) value = value.subarray(1);
    value.copy(raw, half * size + size - value.length);
    offset += 2 + length;
  }
  return raw;
}

// asymmetricKeyDetails builds a new object at each read; a key's fit never changes.
const fitting = new WeakMap<KeyObject, Set<JwsAlgorithm>>();

function fits(alg: JwsAlgorithm, key: KeyObject): boolean {
  let algorithms = fitting.get(key);
  if (!algorithms) {
    algorithms = new Set((Object.keys(RULES) as JwsAlgorithm[]).filter((name) => RULES[name].fits(key)));
    fitting.set(key, algorithms);
  }
  return algorithms.has(alg);
}

/** Checks the signature of a decoded JWS made with `alg` by `key`. */
export function verifyJwsSignature(decoded: DecodedJws, alg: JwsAlgorithm, key: KeyObject): void {
  const rule = RULES[alg];
  if (!fits(alg, key)) throw new JwsError('key', `The key does not fit ${alg}.`);
  if (rule.signatureLength !== undefined && decoded.signature.length !== rule.signatureLength)
    throw new JwsError('signature', 'The signature has the wrong length.');
  const data = Buffer.from(decoded.signingInput);
  const valid =
    rule.signatureLength !== undefined
      ? verify(rule.hash, data, key, rawToDer(decoded.signature))
      : verify(rule.hash, data, rule.options ? { key, ...rule.options } : key, decoded.signature);
  if (!valid) throw new JwsError('signature', 'The signature does not verify.');
}

/** Decodes a compact JWS and checks that `alg`, and no other, signed it with `key`; throws JwsError. */
export function verifyCompactJws(jws: string, alg: JwsAlgorithm, key: KeyObject): DecodedJws {
  const decoded = decodeCompactJws(jws);
  if (decoded.header['alg'] !== alg) throw new JwsError('malformed', `The header does not name ${alg}.`);
  verifyJwsSignature(decoded, alg, key);
  return decoded;
}

/** The base64url ES256 signature (R || S) of a JWS signing input, by a P-256 private key. */
export function es256Signature(signingInput: string, privateKey: KeyObject): string {
  return derToRaw(sign('sha256', Buffer.from(signingInput), privateKey), 32).toString('base64url');
}

type JwsHeader = { typ?: string; kid?: string; x5c?: string[]; cty?: string };
export type EcdsaAlgorithm = 'ES256' | 'ES384' | 'ES512';

/** An ECDSA compact JWS by a key of the algorithm's curve (a verifier's request objects). */
export function signCompactJws(
  alg: EcdsaAlgorithm,
  header: JwsHeader,
  payload: Record<string, unknown>,
  privateKey: KeyObject,
): string {
  const rule = RULES[alg];
  const signingInput = `${Buffer.from(JSON.stringify({ alg, ...header })).toString('base64url')}.${Buffer.from(
    JSON.stringify(payload),
  ).toString('base64url')}`;
  const der = sign(rule.hash, Buffer.from(signingInput), privateKey);
  return `${signingInput}.${derToRaw(der, rule.signatureLength! / 2).toString('base64url')}`;
}

/** An ES256 compact JWS (the tokens and credentials Coffer issues). */
export const signCompactJwsES256 = (
  header: JwsHeader,
  payload: Record<string, unknown>,
  privateKey: KeyObject,
) => signCompactJws('ES256', header, payload, privateKey);
