import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { hashSecret } from '../keys/secrets.ts';
import type { UserIdentity } from '../users/user-repository.ts';
import { insertAuthorizationCode } from './code-repository.ts';

/** A validated authorization request, as kept in an interaction until log-in finishes it. */
export interface AuthorizationRequest {
  clientId: number;
  redirectUri: string;
  scope: string;
  state: string | null;
  nonce: string | null;
  codeChallenge: string | null;
  prompt: 'none' | 'login' | null;
  /** The DPoP key the code is bound to (RFC 9449 §10); absent in interactions from before it existed. */
  dpopJkt?: string | null;
}

/** Codes live 60 s: long enough for a server-side exchange, short for a leaked one. */
export const CODE_TTL_SECONDS = 60;

/** Issues a one-time code bound to client, redirect URI, user, nonce, PKCE challenge and scope. */
export async function issueAuthorizationCode(
  db: Kysely<Database>,
  request: AuthorizationRequest,
  user: Pick<UserIdentity, 'user_id' | 'did' | 'wallet_address'>,
  login: { loginType: string; authTime: number; claimsSealed?: string | null },
  nowSeconds: number,
): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  await insertAuthorizationCode(db, {
    code_hash: hashSecret(code),
    client_id: request.clientId,
    user_id: user.user_id,
    redirect_uri: request.redirectUri,
    scope: request.scope,
    nonce: request.nonce,
    code_challenge: request.codeChallenge,
    login_type: login.loginType,
    auth_time: login.authTime,
    did: user.did,
    wallet_address: user.wallet_address,
    expires_at: nowSeconds + CODE_TTL_SECONDS,
    consumed_at: null,
    dpop_jkt: request.dpopJkt ?? null,
    claims_sealed: login.claimsSealed ?? null,
  });
  return code;
}

/** The redirect back to the client, with `iss` (RFC 9207) so the client knows who answered. */
export function authorizationResponse(
  request: Pick<AuthorizationRequest, 'redirectUri' | 'state'>,
  issuer: string,
  params: Record<string, string>,
): string {
  const url = new URL(request.redirectUri);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  if (request.state !== null) url.searchParams.set('state', request.state);
  url.searchParams.set('iss', issuer);
  return url.toString();
}
