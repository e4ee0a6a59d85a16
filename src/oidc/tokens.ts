import { createHash } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { CofferError } from '../errors.ts';
import type { KeyRing } from '../keys/signing-keys.ts';

/** What the access and identity tokens say, as DESIGN.md (Tokens) fixes it. */
export interface TokenGrant {
  issuer: string;
  clientId: string;
  subject: string;
  scope: string;
  authTime: number;
  nonce: string | null;
  loginType: string;
  ethAddress: string | null;
  didWalletAddress: string;
  jti: string;
  lifetimeSeconds: number;
  /** The DPoP key the access token is bound to (cnf.jkt, RFC 9449 §6.1), or null for a bearer token. */
  jkt: string | null;
}

/** OIDC Core §3.1.3.6: the left half of SHA-256 of the access token, base64url. */
export function atHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

/** The jti of the tokens issued from a code: derived from the code's hash, so a replayed code names them. */
export function jtiForCode(codeHash: string): string {
  return createHash('sha256').update(`jti:${codeHash}`).digest('base64url');
}

export async function signTokens(keys: KeyRing, grant: TokenGrant, nowSeconds: number) {
  const key = await keys.current();
  const exp = nowSeconds + grant.lifetimeSeconds;
  const accessToken = await new SignJWT({
    client_id: grant.clientId,
    scope: grant.scope,
    auth_time: grant.authTime,
    ...(grant.jkt ? { cnf: { jkt: grant.jkt } } : {}),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.kid })
    .setIssuer(grant.issuer)
    .setSubject(grant.subject)
    .setAudience(grant.clientId)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(exp)
    .setJti(grant.jti)
    .sign(key.privateKey);
  const idToken = await new SignJWT({
    auth_time: grant.authTime,
    ...(grant.nonce ? { nonce: grant.nonce } : {}),
    at_hash: atHash(accessToken),
    eth_address: grant.ethAddress,
    login_type: grant.loginType,
    did_wallet_address: grant.didWalletAddress,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: key.kid })
    .setIssuer(grant.issuer)
    .setSubject(grant.subject)
    .setAudience(grant.clientId)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(exp)
    .sign(key.privateKey);
  return { accessToken, idToken, expiresIn: grant.lifetimeSeconds };
}

export interface VerifiedAccessToken {
  subject: string;
  clientId: string;
  scope: string;
  jti: string;
  expiresAt: number;
  /** Set when the token is DPoP-bound. */
  jkt: string | null;
}

const invalidToken = (why: string) => new CofferError('invalid_token', why);

function boundKeyOf(cnf: unknown): string | null {
  if (cnf === undefined) return null;
  const jkt = (cnf as { jkt?: unknown } | null)?.jkt;
  if (typeof jkt !== 'string') throw invalidToken('The access token has an unknown confirmation method.');
  return jkt;
}

/** Checks an access token's signature (by kid, against the published keys), type, issuer and expiry. */
export async function verifyAccessToken(
  keys: KeyRing,
  issuer: string,
  token: string,
): Promise<VerifiedAccessToken> {
  if (token.length > 4096 || token.split('.').length !== 3)
    throw invalidToken('The access token is malformed.');
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const key = header.kid ? await keys.find(header.kid) : undefined;
        if (!key) throw invalidToken('The access token is signed by an unknown key.');
        return key.publicKey;
      },
      {
        issuer,
        typ: 'at+jwt',
        algorithms: ['ES256'],
        requiredClaims: ['sub', 'exp', 'jti', 'client_id', 'aud'],
      },
    );
    if (payload.aud !== payload['client_id'])
      throw invalidToken('The access token audience is not its client.');
    return {
      subject: String(payload.sub),
      clientId: String(payload['client_id']),
      scope: String(payload['scope'] ?? ''),
      jti: String(payload.jti),
      expiresAt: Number(payload.exp),
      jkt: boundKeyOf(payload['cnf']),
    };
  } catch (error) {
    if (error instanceof CofferError) throw error;
    if (error instanceof joseErrors.JWTExpired) throw invalidToken('The access token has expired.');
    if (error instanceof joseErrors.JWTClaimValidationFailed)
      throw invalidToken(`The access token's ${error.claim} claim is not valid.`);
    throw invalidToken('The access token is not valid.');
  }
}
