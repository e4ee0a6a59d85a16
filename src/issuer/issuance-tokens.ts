import { createHmac, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';
import { CofferError } from '../errors.ts';
import { decodeCompactJws, signCompactJwsES256, verifyJwsSignature } from '../keys/compact-jws.ts';
import type { KeyRing } from '../keys/signing-keys.ts';

/**
 * The access token of an issuance (OpenID4VCI §6.2): a JWT of Coffer's OP naming the offer it
 * may fetch, audience the credential issuer, bound to a DPoP key when the wallet sent one. Its
 * subject is `offer:<id>`, never a user id, so no OpenID Connect endpoint takes it.
 */
export interface IssuanceToken {
  offerId: string;
  issuerId: string;
  jkt: string | null;
  jti: string;
  exp: number;
}

/** Long enough for a deferred issuance polled for a quarter of an hour; bound to one offer. */
export const ISSUANCE_TOKEN_TTL = 900;
const SUBJECT_PREFIX = 'offer:';

export async function signIssuanceToken(
  keys: KeyRing,
  input: { asIssuer: string; issuerId: string; offerId: string; jkt: string | null },
  nowSeconds: number,
): Promise<{ token: string; expiresIn: number }> {
  const key = await keys.current();
  const token = signCompactJwsES256(
    { typ: 'at+jwt', kid: key.kid },
    {
      iss: input.asIssuer,
      sub: `${SUBJECT_PREFIX}${input.offerId}`,
      aud: input.issuerId,
      client_id: 'wallet',
      iat: nowSeconds,
      exp: nowSeconds + ISSUANCE_TOKEN_TTL,
      jti: randomBytes(16).toString('base64url'),
      ...(input.jkt ? { cnf: { jkt: input.jkt } } : {}),
    },
    key.privateKeyObject,
  );
  return { token, expiresIn: ISSUANCE_TOKEN_TTL };
}

const invalidToken = (why: string) => new CofferError('invalid_token', why);

export async function verifyIssuanceToken(
  keys: KeyRing,
  expected: { asIssuer: string; issuerId: string },
  raw: string,
  nowSeconds: number,
): Promise<IssuanceToken> {
  let decoded: ReturnType<typeof decodeCompactJws>;
  try {
    decoded = decodeCompactJws(raw);
  } catch {
    throw invalidToken('The access token is not valid.');
  }
  const kid = decoded.header['kid'];
  const key = typeof kid === 'string' ? await keys.find(kid) : undefined;
  if (!key || decoded.header['typ'] !== 'at+jwt' || decoded.header['alg'] !== 'ES256')
    throw invalidToken('The access token is not valid.');
  try {
    verifyJwsSignature(decoded, 'ES256', key.publicKeyObject);
  } catch {
    throw invalidToken('The access token is not valid.');
  }
  const p = decoded.payload;
  if (p['iss'] !== expected.asIssuer || p['aud'] !== expected.issuerId)
    throw invalidToken('The access token is not for this credential issuer.');
  if (typeof p['exp'] !== 'number' || p['exp'] <= nowSeconds)
    throw invalidToken('The access token has expired.');
  const sub = p['sub'];
  if (typeof sub !== 'string' || !sub.startsWith(SUBJECT_PREFIX))
    throw invalidToken('The access token is not an issuance token.');
  const cnf = p['cnf'] as { jkt?: unknown } | undefined;
  return {
    offerId: sub.slice(SUBJECT_PREFIX.length),
    issuerId: expected.issuerId,
    jkt: typeof cnf?.jkt === 'string' ? cnf.jkt : null,
    jti: String(p['jti']),
    exp: p['exp'],
  };
}

/**
 * c_nonce (§7): stateless — an expiry and random bytes, MACed — so the Nonce Endpoint writes
 * nothing; the credential endpoint remembers each nonce it accepts until it expires, so a
 * proof is never accepted twice.
 */
export const C_NONCE_TTL = 300;

export function createCNonce(key: KeyObject, issuerId: string, nowSeconds: number): string {
  const body = `${(nowSeconds + C_NONCE_TTL).toString(36)}.${randomBytes(12).toString('base64url')}`;
  return `${body}.${mac(key, issuerId, body)}`;
}

/** The nonce's expiry (seconds) when it is one of this issuer's and still fresh; else null. */
export function checkCNonce(
  key: KeyObject,
  issuerId: string,
  nonce: unknown,
  nowSeconds: number,
): number | null {
  if (typeof nonce !== 'string' || nonce.length > 100) return null;
  const last = nonce.lastIndexOf('.');
  if (last < 0) return null;
  const body = nonce.slice(0, last);
  const given = Buffer.from(nonce.slice(last + 1));
  const wanted = Buffer.from(mac(key, issuerId, body));
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return null;
  const expiresAt = Number.parseInt(body.slice(0, body.indexOf('.')), 36);
  return Number.isFinite(expiresAt) && expiresAt > nowSeconds ? expiresAt : null;
}

const mac = (key: KeyObject, issuerId: string, body: string) =>
  createHmac('sha256', key).update(`${issuerId}|${body}`).digest('base64url').slice(0, 22);
