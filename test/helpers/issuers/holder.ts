import type { JsonWebKey } from 'node:crypto';
import { base58btc } from 'multiformats/bases/base58';

/** The public JWK of a user's hosted Ed25519 holder key, read from their did:key (did_wallet_address). */
export function holderJwkOf(did: string): JsonWebKey {
  const bytes = base58btc.decode(did.slice('did:key:'.length));
  if (bytes[0] !== 0xed || bytes[1] !== 0x01) throw new Error(`${did} is not an Ed25519 did:key`);
  return { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(bytes.slice(2)).toString('base64url') };
}
