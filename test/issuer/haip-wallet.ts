import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { WalletProviderFiles } from '../oid4vci/haip-helpers.ts';
import type { IssuerAndWallet } from './hosted-wallet-world.ts';

/**
 * A raw HAIP wallet made with jose, for the issuer's token endpoint: an instance key, DPoP proofs
 * (retried once with the server's DPoP-Nonce) and a Wallet Attestation with its PoP.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

const seconds = () => Math.floor(Date.now() / 1000);

export type Keys = Awaited<ReturnType<typeof generateKeyPair>>;

/** A wallet instance key: DPoP proofs, the attestation's cnf and its PoP. */
export async function instanceKey() {
  const keys = await generateKeyPair('ES256', { extractable: true });
  return { keys, jwk: await exportJWK(keys.publicKey) };
}

export const dpopProof = (
  key: { keys: Keys; jwk: JWK },
  htm: string,
  htu: string,
  extra: Record<string, unknown>,
) =>
  new SignJWT({ htm, htu, jti: randomUUID(), iat: seconds(), ...extra })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk })
    .sign(key.keys.privateKey);

/** A Wallet Attestation and its PoP (OAuth 2.0 Attestation-Based Client Authentication), signed by `provider`. */
export async function clientAttestation(
  provider: WalletProviderFiles,
  instance: { keys: Keys; jwk: JWK },
  audience: string,
  clientId = 'test-wallet',
) {
  const attestation = await new SignJWT({
    iss: 'https://wallet-provider.example',
    sub: clientId,
    cnf: { jwk: instance.jwk },
    iat: seconds(),
    exp: seconds() + 600,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'oauth-client-attestation+jwt', x5c: provider.x5c })
    .sign(provider.privateKey);
  const pop = await new SignJWT({ iss: clientId, aud: audience, jti: randomUUID(), iat: seconds() })
    .setProtectedHeader({ alg: 'ES256', typ: 'oauth-client-attestation-pop+jwt' })
    .sign(instance.keys.privateKey);
  return { 'oauth-client-attestation': attestation, 'oauth-client-attestation-pop': pop };
}

/** Sends a request with a fresh DPoP proof, once more with the server's DPoP-Nonce if it asks for one. */
export async function withDpop(
  world: IssuerAndWallet,
  key: { keys: Keys; jwk: JWK },
  url: string,
  init: { headers: Record<string, string>; body: string },
  extra: Record<string, unknown> = {},
): Promise<{ status: number; body: Json }> {
  let nonce: string | undefined;
  for (;;) {
    const proof = await dpopProof(key, 'POST', url, { ...extra, ...(nonce ? { nonce } : {}) });
    const response = await world.front.fetch(url, {
      method: 'POST',
      headers: { ...init.headers, dpop: proof },
      body: init.body,
    });
    const body = (await response.json()) as Json;
    const asked = response.headers.get('dpop-nonce');
    if (body?.error === 'use_dpop_nonce' && asked && nonce === undefined) {
      nonce = asked;
      continue;
    }
    return { status: response.status, body };
  }
}
