import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { getAddress } from 'viem';
import type { Database } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import { hashSecret } from '../keys/secrets.ts';
import type { KeyRing } from '../keys/signing-keys.ts';
import { authenticateClient, countFailure } from './client-authentication.ts';
import { type CodeConsumer, findAuthorizationCode, revokeToken } from './code-repository.ts';
import type { RateLimiter } from './rate-limit.ts';
import { jtiForCode, signTokens } from './tokens.ts';

export interface TokenDeps {
  db: Kysely<Database>;
  consumeCode: CodeConsumer;
  keys: KeyRing;
  limiter: RateLimiter;
  issuer: string;
  accessTokenTtl: number;
  now?: () => number;
}

export interface TokenRequest {
  grant_type: string;
  code: string;
  redirect_uri: string;
  code_verifier?: string | undefined;
  /** From the body or from HTTP Basic; the route decides which. */
  client_id: string;
  client_secret: string | undefined;
}

export interface TokenResponse {
  scope: string;
  token_type: 'Bearer';
  access_token: string;
  expire_in: number;
  expires_in: number;
  id_token: string;
}

const invalidGrant = (why: string) => new CofferError('invalid_grant', why);

function pkceMatches(challenge: string, verifier: string | undefined): boolean {
  if (verifier === undefined || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  return createHash('sha256').update(verifier, 'ascii').digest('base64url') === challenge;
}

/**
 * The authorization-code grant (RFC 6749 §4.1.3, OIDC Core §3.1.3). The code is consumed before
 * anything else is checked, so a code is never usable twice whatever the outcome; a second use
 * revokes the tokens issued from the first (RFC 6749 §4.1.2).
 */
export async function exchangeAuthorizationCode(
  deps: TokenDeps,
  request: TokenRequest,
  ip: string,
): Promise<TokenResponse> {
  try {
    return await exchange(deps, request);
  } catch (error) {
    // Successes cost no count: each needs a fresh code from a log-in.
    if (error instanceof CofferError && (error.code === 'invalid_client' || error.code === 'invalid_grant')) {
      await countFailure(deps.limiter, ip);
    }
    throw error;
  }
}

async function exchange(deps: TokenDeps, request: TokenRequest): Promise<TokenResponse> {
  if (request.grant_type !== 'authorization_code') {
    throw new CofferError('unsupported_grant_type', 'Only the authorization_code grant is supported.');
  }
  const client = await authenticateClient(deps.db, {
    clientId: request.client_id,
    secret: request.client_secret,
  });
  const nowSeconds = Math.floor((deps.now ? deps.now() : Date.now()) / 1000);
  const codeHash = hashSecret(request.code);
  const code = await deps.consumeCode(codeHash, nowSeconds);
  if (!code) {
    const used = await findAuthorizationCode(deps.db, codeHash);
    if (used && used.client_id === client.client_id) {
      await revokeToken(
        deps.db,
        jtiForCode(codeHash),
        (used.consumed_at ?? nowSeconds) + deps.accessTokenTtl,
      );
      throw invalidGrant('The code has already been used; the tokens issued from it are revoked.');
    }
    throw invalidGrant('The code is not valid.');
  }
  if (code.client_id !== client.client_id) throw invalidGrant('The code was issued to another client.');
  if (code.expires_at <= nowSeconds) throw invalidGrant('The code has expired.');
  if (code.redirect_uri !== request.redirect_uri)
    throw invalidGrant('redirect_uri differs from the authorization request.');
  if (code.code_challenge !== null && !pkceMatches(code.code_challenge, request.code_verifier)) {
    throw invalidGrant('The PKCE code_verifier does not match the code_challenge.');
  }

  const tokens = await signTokens(
    deps.keys,
    {
      issuer: deps.issuer,
      clientId: String(client.client_id),
      subject: String(code.user_id),
      scope: code.scope,
      authTime: code.auth_time,
      nonce: code.nonce,
      loginType: code.login_type,
      ethAddress: code.wallet_address ? getAddress(code.wallet_address) : null,
      didWalletAddress: code.did,
      jti: jtiForCode(codeHash),
      lifetimeSeconds: deps.accessTokenTtl,
    },
    nowSeconds,
  );
  return {
    scope: code.scope,
    token_type: 'Bearer',
    access_token: tokens.accessToken,
    expire_in: tokens.expiresIn,
    expires_in: tokens.expiresIn,
    id_token: tokens.idToken,
  };
}
