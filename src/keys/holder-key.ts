import { createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { base58btc } from 'multiformats/bases/base58';

/** Multicodec `ed25519-pub` (0xed) as an unsigned varint: the did:key prefix of Ed25519 keys. */
const ED25519_PUB_PREFIX = Uint8Array.of(0xed, 0x01);

/** A user's hosted holder key: Ed25519, kept as a JWK (`d` private, `x` public). */
export interface HolderKey {
  did: string;
  privateJwk: JsonWebKey;
}

/** `did:key:z6Mk…`: multibase base58btc of the multicodec-prefixed 32-byte public key. */
export function didKeyFromEd25519PublicKey(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new Error('an Ed25519 public key has 32 bytes');
  const bytes = new Uint8Array(34);
  bytes.set(ED25519_PUB_PREFIX, 0);
  bytes.set(publicKey, 2);
  return `did:key:${base58btc.encode(bytes)}`;
}

/** The raw public key that a did:key of an Ed25519 key names. */
export function ed25519PublicKeyFromDidKey(did: string): Uint8Array {
  if (!did.startsWith('did:key:z')) throw new Error('not a base58btc did:key');
  const bytes = base58btc.decode(did.slice('did:key:'.length));
  if (bytes.length !== 34 || bytes[0] !== 0xed || bytes[1] !== 0x01) {
    throw new Error('not an Ed25519 did:key');
  }
  return bytes.slice(2);
}

export function generateHolderKey(): HolderKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  const privateJwk = privateKey.export({ format: 'jwk' });
  return { did: didKeyFromEd25519PublicKey(Buffer.from(privateJwk.x!, 'base64url')), privateJwk };
}

/** The did:key of a private JWK, derived from its `d` rather than trusting its `x`. */
export function didOfPrivateJwk(privateJwk: JsonWebKey): string {
  const publicJwk = createPublicKey(createPrivateKey({ key: privateJwk, format: 'jwk' })).export({
    format: 'jwk',
  });
  return didKeyFromEd25519PublicKey(Buffer.from(publicJwk.x!, 'base64url'));
}
