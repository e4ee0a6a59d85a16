import { createHash } from 'node:crypto';
import { CofferError } from '../errors.ts';
import {
  type DecodedJws,
  decodeCompactJws,
  signCompactJwsES256,
  verifyJwsSignature,
} from '../keys/compact-jws.ts';
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
  /** After a credential log-in: the disclosed OpenID Connect claims (identity token only). */
  claims?: Record<string, unknown> | undefined;
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
  const accessToken = signCompactJwsES256(
    { typ: 'at+jwt', kid: key.kid },
    {
      client_id: grant.clientId,
      scope: grant.scope,
      auth_time: grant.authTime,
      ...(grant.jkt ? { cnf: { jkt: grant.jkt } } : {}),
      iss: grant.issuer,
      sub: grant.subject,
      aud: grant.clientId,
      iat: nowSeconds,
      exp,
      jti: grant.jti,
    },
    key.privateKeyObject,
  );
  const idToken = signCompactJwsES256(
    { typ: 'JWT', kid: key.kid },
    {
      // First, so that none of them can stand in for a claim Coffer sets.
      ...grant.claims,
      auth_time: grant.authTime,
      ...(grant.nonce ? { nonce: grant.nonce } : {}),
      at_hash: atHash(accessToken),
      eth_address: grant.ethAddress,
      login_type: grant.loginType,
      did_wallet_address: grant.didWalletAddress,
      iss: grant.issuer,
      sub: grant.subject,
      aud: grant.clientId,
      iat: nowSeconds,
      exp,
    },
    key.privateKeyObject,
  );
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

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

// An app presents one access token request after request until it expires. What a token says
// and who signed it never change, so a verified token is remembered (per key ring, bounded, the
// oldest first out); each use still checks its expiry and that its key is still published.
// Revocation is not part of this: the bearer check asks the database every time.
interface VerifiedEntry {
  issuer: string;
  kid: string;
  token: VerifiedAccessToken;
}
const verifiedTokens = new WeakMap<KeyRing, Map<string, VerifiedEntry>>();
const MAX_VERIFIED_TOKENS = 10_000;

/**
 * Checks an access token's signature (by kid, against the published keys), type, issuer and
 * expiry. Only Coffer's own tokens pass, so the checks are exactly what it issues: ES256,
 * `typ` at+jwt, and the claims of signTokens.
 */
export async function verifyAccessToken(
  keys: KeyRing,
  issuer: string,
  token: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<VerifiedAccessToken> {
  let verified = verifiedTokens.get(keys);
  if (!verified) {
    verified = new Map();
    verifiedTokens.set(keys, verified);
  }
  const known = verified.get(token);
  if (known && known.issuer === issuer) {
    if (known.token.expiresAt <= nowSeconds) {
      verified.delete(token);
      throw invalidToken('The access token has expired.');
    }
    if (await keys.find(known.kid)) return known.token;
    verified.delete(token);
  }
  const checked = await checkAccessToken(keys, issuer, token, nowSeconds);
  if (verified.size >= MAX_VERIFIED_TOKENS) verified.delete(verified.keys().next().value!);
  verified.set(token, { issuer, ...checked });
  return checked.token;
}

async function checkAccessToken(
  keys: KeyRing,
  issuer: string,
  token: string,
  nowSeconds: number,
): Promise<{ kid: string; token: VerifiedAccessToken }> {
  if (token.length > 4096) throw invalidToken('The access token is malformed.');
  let decoded: DecodedJws;
  try {
    decoded = decodeCompactJws(token);
  } catch {
    throw invalidToken('The access token is malformed.');
  }
  const { header, payload } = decoded;
  if (header['alg'] !== 'ES256' || header['typ'] !== 'at+jwt')
    throw invalidToken('The access token is not valid.');
  const key = isText(header['kid']) ? await keys.find(header['kid']) : undefined;
  if (!key) throw invalidToken('The access token is signed by an unknown key.');
  try {
    verifyJwsSignature(decoded, 'ES256', key.publicKeyObject);
  } catch {
    throw invalidToken('The access token is not valid.');
  }
  if (payload['iss'] !== issuer) throw invalidToken("The access token's iss claim is not valid.");
  for (const claim of ['sub', 'jti', 'client_id', 'aud'])
    if (!isText(payload[claim])) throw invalidToken(`The access token's ${claim} claim is not valid.`);
  const exp = payload['exp'];
  if (typeof exp !== 'number' || !Number.isFinite(exp))
    throw invalidToken("The access token's exp claim is not valid.");
  if (exp <= nowSeconds) throw invalidToken('The access token has expired.');
  if (payload['aud'] !== payload['client_id'])
    throw invalidToken('The access token audience is not its client.');
  return {
    kid: key.kid,
    // Frozen: every later request with this token shares the object.
    token: Object.freeze({
      subject: payload['sub'] as string,
      clientId: payload['client_id'] as string,
      scope: typeof payload['scope'] === 'string' ? payload['scope'] : '',
      jti: payload['jti'] as string,
      expiresAt: exp,
      jkt: boundKeyOf(payload['cnf']),
    }),
  };
}
