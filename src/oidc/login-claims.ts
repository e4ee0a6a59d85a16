import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';

/**
 * After a credential log-in (DESIGN.md, Logging in with a wallet) the identity token and userinfo
 * add the disclosed claims that have OpenID Connect names (Core §5.1), with the e-mail the
 * verified account claim named and `email_verified: true`. They are personal data, so they travel
 * sealed: on the code, on the refresh tokens of its family, and per access token for userinfo
 * until that token expires. Never inside the access token itself.
 */

/** OIDC Core §5.1 claims a credential can disclose as plain strings. */
const OIDC_STRING_CLAIMS = [
  'name',
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'gender',
  'birthdate',
  'locale',
  'phone_number',
] as const;

export type LoginClaims = Record<string, string | boolean>;

/** The claims a credential log-in adds: the OIDC-named strings it disclosed, and the verified e-mail. */
export function oidcClaimsOfCredential(disclosed: Record<string, unknown>, email: string): LoginClaims {
  const claims: LoginClaims = {};
  for (const name of OIDC_STRING_CLAIMS) {
    const value = disclosed[name];
    if (typeof value === 'string' && value !== '' && value.length <= 1000) claims[name] = value;
  }
  claims['email'] = email;
  claims['email_verified'] = true;
  return claims;
}

/** One context per client and user: the sealed claims move from code to refresh token unchanged. */
export const claimsContext = (clientId: number, userId: number) => `login-claims/${clientId}/${userId}`;

export function sealLoginClaims(
  cipher: FieldCipher,
  clientId: number,
  userId: number,
  claims: LoginClaims,
): string {
  return cipher.encrypt(JSON.stringify(claims), claimsContext(clientId, userId));
}

export function openLoginClaims(
  cipher: FieldCipher,
  clientId: number,
  userId: number,
  sealed: string,
): LoginClaims {
  return JSON.parse(cipher.decrypt(sealed, claimsContext(clientId, userId))) as LoginClaims;
}

/** Keeps a log-in's claims for one access token, until it expires (expired-rows.ts sweeps them). */
export async function keepAccessTokenClaims(
  db: Kysely<Database>,
  row: { jti: string; user_id: number; claims_sealed: string; expires_at: number },
): Promise<void> {
  await db
    .insertInto('access_token_claims')
    .values(row)
    .onConflict((oc) => oc.column('jti').doNothing())
    .execute();
}

/** The claims kept for an access token, or undefined when its log-in disclosed none. */
export async function accessTokenClaims(
  db: Kysely<Database>,
  cipher: FieldCipher,
  token: { jti: string; clientId: string; userId: number },
  nowSeconds: number,
): Promise<LoginClaims | undefined> {
  const row = await db
    .selectFrom('access_token_claims')
    .select(['claims_sealed', 'user_id', 'expires_at'])
    .where('jti', '=', token.jti)
    .executeTakeFirst();
  if (!row || row.user_id !== token.userId || row.expires_at <= nowSeconds) return undefined;
  return openLoginClaims(cipher, Number(token.clientId), token.userId, row.claims_sealed);
}
