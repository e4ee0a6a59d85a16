import { createHash, generateKeyPairSync, type KeyObject, randomBytes, type webcrypto } from 'node:crypto';
import { CompactSign, calculateJwkThumbprint, type JWK } from 'jose';

/** An ES256 key on P-256 (HAIP forces ES256 for the suite's DPoP and instance keys), with a kid. */
export interface SuiteKey {
  privateKey: KeyObject;
  publicJwk: JWK;
  privateJwk: JWK;
}

export function newSuiteKey(): SuiteKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = randomBytes(8).toString('hex');
  return {
    privateKey,
    publicJwk: { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, alg: 'ES256' },
    privateJwk: { ...(privateKey.export({ format: 'jwk' }) as JWK), kid, alg: 'ES256' },
  };
}

/** The public members only, as a JOSE header carries a key. */
export const bareJwk = ({ kty, crv, x, y, n, e }: JWK): JWK =>
  Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined)) as JWK;

export const thumbprintOf = (jwk: JWK) => calculateJwkThumbprint(bareJwk(jwk), 'sha256');

export const sha256Base64url = (value: string) =>
  createHash('sha256').update(value, 'ascii').digest('base64url');

export const seconds = () => Math.floor(Date.now() / 1000);

export const randomString = (bytes = 16) => randomBytes(bytes).toString('base64url');

/** A compact JWS of any header and payload (the header as given, so tests may break it). */
export async function signCompact(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key: KeyObject | webcrypto.CryptoKey,
): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader(header as { alg: string })
    .sign(key);
}

export const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function decodeJwt(jwt: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
} {
  const [header, payload] = jwt.split('.');
  return {
    header: JSON.parse(Buffer.from(header!, 'base64url').toString()) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>,
  };
}
