import { type KeyObject, sign } from 'node:crypto';

/**
 * The issuer's ES256 key and its certificate chain, leaf first, as `x5c` carries it (base64 DER):
 * what signs its JOSE and COSE status lists, so that a holder or verifier checks a list with the
 * very key and chain that signed the credential.
 */
export interface ListSigner {
  privateKey: KeyObject;
  x5c: string[];
}

/** A compact JWS, ES256, made with node:crypto: one synchronous signature, no WebCrypto round trip. */
export function signEs256Jws(
  header: Record<string, unknown>,
  payload: object,
  privateKey: KeyObject,
): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${encode({ alg: 'ES256', ...header })}.${encode(payload)}`;
  const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}
