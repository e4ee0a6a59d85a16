import { createHash } from 'node:crypto';

/** RFC 7638 §3.2: the members that make up each key type's thumbprint, in lexicographic order. */
const REQUIRED_MEMBERS: Record<string, string[]> = {
  EC: ['crv', 'kty', 'x', 'y'],
  OKP: ['crv', 'kty', 'x'],
  RSA: ['e', 'kty', 'n'],
};

/**
 * The SHA-256 JWK Thumbprint (RFC 7638), base64url, of a public or private JWK. Synchronous on
 * node:crypto: jose's calculateJwkThumbprint hashes through WebCrypto, an async job on the
 * thread pool for a hash of a hundred bytes, once per DPoP key, presentation and key proof.
 * Throws on a key type or member it cannot take.
 */
export function jwkThumbprint(jwk: object): string {
  const members = jwk as Record<string, unknown>;
  const required = typeof members['kty'] === 'string' ? REQUIRED_MEMBERS[members['kty']] : undefined;
  if (!required) throw new TypeError('the JWK has no key type a thumbprint is defined for');
  const canonical: Record<string, string> = {};
  for (const name of required) {
    const value = members[name];
    if (typeof value !== 'string') throw new TypeError(`the JWK's ${name} is not a string`);
    canonical[name] = value;
  }
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url');
}
