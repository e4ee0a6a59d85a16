import { type JsonWebKey, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { base58btc } from 'multiformats/bases/base58';

/** The public JWK of a user's hosted Ed25519 holder key, read from their did:key (did_wallet_address). */
export function holderJwkOf(did: string): JsonWebKey {
  const bytes = base58btc.decode(did.slice('did:key:'.length));
  if (bytes[0] !== 0xed || bytes[1] !== 0x01) throw new Error(`${did} is not an Ed25519 did:key`);
  return { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(bytes.slice(2)).toString('base64url') };
}

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

/** A holder outside Coffer, named by a DID of its own key: an Ed25519 did:key or a P-256 did:jwk. */
export interface DidHolder {
  did: string;
  /** The `kid` its VP JWTs carry: a DID URL of its one key. */
  kid: string;
  alg: 'EdDSA' | 'ES256';
  keys: KeyPair;
}

export async function createDidHolder(method: 'key' | 'jwk' = 'key'): Promise<DidHolder> {
  if (method === 'jwk') {
    const keys = await generateKeyPair('ES256', { extractable: true });
    const { kty, crv, x, y } = await exportJWK(keys.publicKey);
    const did = `did:jwk:${Buffer.from(JSON.stringify({ kty, crv, x, y })).toString('base64url')}`;
    return { did, kid: `${did}#0`, alg: 'ES256', keys };
  }
  const keys = await generateKeyPair('EdDSA', { extractable: true });
  const { x } = await exportJWK(keys.publicKey);
  const did = `did:key:${base58btc.encode(Uint8Array.from([0xed, 0x01, ...Buffer.from(x!, 'base64url')]))}`;
  return { did, kid: `${did}#${did.slice('did:key:'.length)}`, alg: 'EdDSA', keys };
}

/**
 * A VP JWT (jwt_vc_json, OpenID4VP B.1.3.1) around `credentials`, signed with jose by `signer`
 * (the holder's key unless told), `iss` the holder's DID; `claims` carry `aud` and `nonce`.
 */
export function signVpJwt(
  holder: DidHolder,
  credentials: string[],
  claims: JWTPayload,
  signer = holder.keys.privateKey,
): Promise<string> {
  return new SignJWT({
    iss: holder.did,
    iat: Math.floor(Date.now() / 1000),
    jti: `urn:uuid:${randomUUID()}`,
    vp: {
      '@context': ['https://www.w3.org/2018/credentials/v1'],
      type: ['VerifiablePresentation'],
      verifiableCredential: credentials,
    },
    ...claims,
  })
    .setProtectedHeader({ alg: holder.alg, typ: 'JWT', kid: holder.kid })
    .sign(signer);
}
