import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import { hashSecret } from '../keys/secrets.ts';
import type { KeyRing } from '../keys/signing-keys.ts';
import { authenticateClient, type ClientCredentials, countFailure } from './client-authentication.ts';
import { revokeToken } from './code-repository.ts';
import { findRefreshToken, revokeRefreshFamily } from './refresh-tokens.ts';
import { verifyAccessToken } from './tokens.ts';

export interface RevocationDeps {
  db: Kysely<Database>;
  keys: KeyRing;
  limiter: RateLimiter;
  issuer: string;
  accessTokenTtl: number;
  now?: () => number;
}

/**
 * RFC 7009 §2.1: revokes an access or refresh token of the authenticated client. A refresh token
 * takes its whole family with it, and the access tokens issued beside them (§2.1 allows it; the
 * person who signs out of an app expects nothing of that log-in to keep working). Its jti goes into
 * revoked_tokens, which every bearer check reads, so every instance on the database refuses it
 * from the next request. A token that is not valid, already expired or another client's is left
 * alone, and the answer is the same (§2.2): nothing is learnt about tokens one does not hold.
 */
export async function revokeAccessToken(
  deps: RevocationDeps,
  credentials: ClientCredentials,
  token: string,
  ip: string,
): Promise<void> {
  let clientId: number;
  try {
    clientId = (await authenticateClient(deps.db, credentials)).client_id;
  } catch (error) {
    if (error instanceof CofferError && error.code === 'invalid_client') await countFailure(deps.limiter, ip);
    throw error;
  }
  if (!token.includes('.')) {
    // Access tokens are JWTs; anything else can only be a refresh token (token_type_hint is not needed).
    const row = await findRefreshToken(deps.db, hashSecret(token));
    if (row && row.client_id === clientId) {
      const nowSeconds = Math.floor((deps.now ? deps.now() : Date.now()) / 1000);
      await revokeRefreshFamily(deps.db, row.family_id, nowSeconds, deps.accessTokenTtl);
    }
    return;
  }
  let verified: Awaited<ReturnType<typeof verifyAccessToken>>;
  try {
    verified = await verifyAccessToken(deps.keys, deps.issuer, token);
  } catch (error) {
    if (error instanceof CofferError) return;
    throw error;
  }
  if (verified.clientId !== String(clientId)) return;
  await revokeToken(deps.db, verified.jti, verified.expiresAt);
}
