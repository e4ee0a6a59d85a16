import type { JsonWebKey } from 'node:crypto';
import { createPublicKey } from 'node:crypto';
import { base58btc } from 'multiformats/bases/base58';

/** Why a DID or DID URL names no key Coffer resolves locally; the message is for the issuer. */
export class DidResolutionError extends Error {
  override readonly name = 'DidResolutionError';
}

const ED25519_PUB = [0xed, 0x01];
const P256_PUB = [0x80, 0x24];

/** A compressed P-256 point as a public JWK (node decompresses it). */
function p256Jwk(compressed: Uint8Array): JsonWebKey {
  // SubjectPublicKeyInfo prefix for an id-ecPublicKey / prime256v1 compressed point.
  const spki = Buffer.concat([
    Buffer.from('3039301306072a8648ce3d020106082a8648ce3d030107032200', 'hex'),
    compressed,
  ]);
  const { kty, crv, x, y } = createPublicKey({ key: spki, format: 'der', type: 'spki' }).export({
    format: 'jwk',
  });
  return { kty, crv, x, y };
}

/**
 * The public key a `did:key` (Ed25519 `z6Mk…`, P-256 `zDn…`) or `did:jwk` names, resolved
 * locally: nothing is ever fetched to check a credential. A DID URL's fragment must name that key.
 */
export function resolveDidKey(didUrl: string): { did: string; jwk: JsonWebKey } {
  if (didUrl.length > 2048) throw new DidResolutionError('the DID is too long');
  const [did, fragment] = didUrl.split('#', 2) as [string, string | undefined];
  if (did.startsWith('did:jwk:')) {
    let jwk: JsonWebKey;
    try {
      jwk = JSON.parse(Buffer.from(did.slice('did:jwk:'.length), 'base64url').toString('utf8'));
    } catch {
      throw new DidResolutionError(`${did} is not a did:jwk of a JSON Web Key`);
    }
    if (jwk === null || typeof jwk !== 'object' || 'd' in jwk) {
      throw new DidResolutionError(`${did} is not a did:jwk of a public key`);
    }
    if (fragment !== undefined && fragment !== '0')
      throw new DidResolutionError(`${didUrl} names no key of ${did}`);
    return { did, jwk };
  }
  const match = /^did:key:(z[1-9A-HJ-NP-Za-km-z]+)$/.exec(did);
  if (!match)
    throw new DidResolutionError(
      `${did} is neither a did:key nor a did:jwk; no other DID method is resolved`,
    );
  if (fragment !== undefined && fragment !== match[1])
    throw new DidResolutionError(`${didUrl} names no key of ${did}`);
  let bytes: Uint8Array;
  try {
    bytes = base58btc.decode(match[1]!);
  } catch {
    throw new DidResolutionError(`${did} is not valid base58btc`);
  }
  if (bytes.length === 34 && bytes[0] === ED25519_PUB[0] && bytes[1] === ED25519_PUB[1]) {
    return { did, jwk: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(bytes.slice(2)).toString('base64url') } };
  }
  if (bytes.length === 35 && bytes[0] === P256_PUB[0] && bytes[1] === P256_PUB[1]) {
    try {
      return { did, jwk: p256Jwk(bytes.slice(2)) };
    } catch {
      throw new DidResolutionError(`${did} is not a valid P-256 key`);
    }
  }
  throw new DidResolutionError(`${did} is not an Ed25519 or P-256 did:key`);
}
