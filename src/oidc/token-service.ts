import { createHash } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { getAddress } from 'viem';
import type { ClientsTable, Database } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { hashSecret } from '../keys/secrets.ts';
import type { KeyRing } from '../keys/signing-keys.ts';
import { authenticateClient, countFailure, grantTypesOf } from './client-authentication.ts';
import { type CodeConsumer, findAuthorizationCode, revokeToken } from './code-repository.ts';
import { type DpopDeps, verifyDpopProof } from './dpop.ts';
import { keepAccessTokenClaims, openLoginClaims } from './login-claims.ts';
import {
  findRefreshToken,
  issueRefreshToken,
  jtiForRefreshToken,
  type RefreshTokenRotator,
  revokeRefreshFamily,
} from './refresh-tokens.ts';
import { jtiForCode, signTokens, type TokenGrant } from './tokens.ts';

export interface TokenDeps {
  db: Kysely<Database>;
  consumeCode: CodeConsumer;
  rotateRefreshToken: RefreshTokenRotator;
  keys: KeyRing;
  /** Opens the disclosed claims a credential log-in left on the code. */
  cipher: FieldCipher;
  limiter: RateLimiter;
  dpop: DpopDeps;
  issuer: string;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  /** Grants another service adds to this token endpoint (credential issuance, OpenID4VCI §6). */
  grantExtensions: GrantExtension[];
  now?: () => number;
}

/** A token response without identity: the access token of a grant extension (RFC 6749 §5.1). */
export interface ExtensionTokenResponse {
  token_type: 'Bearer' | 'DPoP';
  access_token: string;
  expire_in: number;
  expires_in: number;
  authorization_details?: object[];
}

/**
 * A grant handled by another service at this token endpoint: the pre-authorized code, or the
 * codes of issuance flows that wallets start (wallets are not registered clients). It gets the
 * whole request, with the DPoP key already proven, and answers the token response.
 */
export interface GrantExtension {
  /**
   * What the provider's metadata adds for it (grant types, authorization_details types, token
   * endpoint authentication methods such as attest_jwt_client_auth).
   */
  metadata: { grantTypes: string[]; members: Record<string, unknown>; tokenEndpointAuthMethods?: string[] };
  handles(request: TokenRequest): boolean;
  exchange(request: TokenRequest, jkt: string | null, ip: string): Promise<ExtensionTokenResponse>;
}

export interface TokenRequest {
  grant_type: string;
  code?: string | undefined;
  redirect_uri?: string | undefined;
  code_verifier?: string | undefined;
  refresh_token?: string | undefined;
  scope?: string | undefined;
  /** From the body or from HTTP Basic; the route decides which. */
  client_id: string;
  client_secret: string | undefined;
  /** The request's DPoP header, if any. */
  dpop?: string | undefined;
  /** Every parameter of the body, for grant extensions. */
  body?: Record<string, unknown>;
  /** OAuth 2.0 Attestation-Based Client Authentication headers, for grant extensions. */
  clientAttestation?: { attestation: string | undefined; pop: string | undefined };
}

export interface TokenResponse {
  scope: string;
  token_type: 'Bearer' | 'DPoP';
  access_token: string;
  expire_in: number;
  expires_in: number;
  id_token: string;
  refresh_token?: string;
}

type Client = Selectable<ClientsTable>;
const invalidGrant = (why: string) => new CofferError('invalid_grant', why);

function pkceMatches(challenge: string, verifier: string | undefined): boolean {
  if (verifier === undefined || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  return createHash('sha256').update(verifier, 'ascii').digest('base64url') === challenge;
}

/**
 * The token endpoint (RFC 6749 §4.1.3 and §6, OIDC Core §3.1.3 and §12): client authentication,
 * then the DPoP proof (before anything is consumed, so a nonce round trip costs no code), then
 * the grant.
 */
export async function exchangeGrant(
  deps: TokenDeps,
  request: TokenRequest,
  ip: string,
): Promise<TokenResponse | ExtensionTokenResponse> {
  const extension = deps.grantExtensions.find((e) => e.handles(request));
  if (extension) {
    const jkt = request.dpop === undefined ? null : (await verifyTokenEndpointProof(deps, request.dpop)).jkt;
    return extension.exchange(request, jkt, ip);
  }
  try {
    if (request.grant_type !== 'authorization_code' && request.grant_type !== 'refresh_token') {
      throw new CofferError(
        'unsupported_grant_type',
        'The grant_type must be authorization_code or refresh_token.',
      );
    }
    requireGrantParameters(request);
    const client = await authenticateClient(deps.db, {
      clientId: request.client_id,
      secret: request.client_secret,
    });
    if (!grantTypesOf(client).includes(request.grant_type)) {
      throw new CofferError(
        'unauthorized_client',
        `This client is not registered for ${request.grant_type}.`,
      );
    }
    const jkt = await proofKeyOf(deps, client, request.dpop);
    const nowSeconds = Math.floor((deps.now ? deps.now() : Date.now()) / 1000);
    return request.grant_type === 'authorization_code'
      ? await exchangeCode(deps, client, request, jkt, nowSeconds)
      : await exchangeRefreshToken(deps, client, request, jkt, nowSeconds);
  } catch (error) {
    // Successes cost no count: each needs a fresh code from a log-in or a live refresh token.
    if (error instanceof CofferError && (error.code === 'invalid_client' || error.code === 'invalid_grant')) {
      await countFailure(deps.limiter, ip);
    }
    throw error;
  }
}

/** What each grant needs, answered like a schema violation so clients handle both alike. */
function requireGrantParameters(request: TokenRequest): void {
  const needed =
    request.grant_type === 'authorization_code'
      ? (['code', 'redirect_uri'] as const)
      : (['refresh_token'] as const);
  const missing = needed.filter((name) => !request[name]);
  if (missing.length) {
    throw new CofferError('invalid_request', `/body/${missing[0]} is required for ${request.grant_type}.`, {
      details: missing.map((name) => ({ path: `/body/${name}`, message: 'is required' })),
    });
  }
}

async function proofKeyOf(deps: TokenDeps, client: Client, proof: string | undefined) {
  if (proof === undefined) {
    if (client.dpop_bound === 1)
      throw new CofferError('invalid_dpop_proof', 'This client must send a DPoP proof (RFC 9449).');
    return null;
  }
  const { jkt } = await verifyTokenEndpointProof(deps, proof);
  return jkt;
}

const verifyTokenEndpointProof = (deps: TokenDeps, proof: string) =>
  verifyDpopProof(deps.dpop, proof, { method: 'POST', url: `${deps.issuer}/v2/openidc/token` });

/** A code is consumed before it is checked, so it is never usable twice whatever the outcome. */
async function exchangeCode(
  deps: TokenDeps,
  client: Client,
  request: TokenRequest,
  jkt: string | null,
  nowSeconds: number,
): Promise<TokenResponse> {
  const codeHash = hashSecret(request.code!);
  const code = await deps.consumeCode(codeHash, nowSeconds);
  if (!code) {
    const used = await findAuthorizationCode(deps.db, codeHash);
    if (used && used.client_id === client.client_id) {
      // A replayed code revokes what the first use gave (RFC 6749 §4.1.2): the access token and
      // any refresh token family started with it.
      await revokeToken(
        deps.db,
        jtiForCode(codeHash),
        (used.consumed_at ?? nowSeconds) + deps.accessTokenTtl,
      );
      await revokeRefreshFamily(deps.db, familyOfCode(codeHash), nowSeconds, deps.accessTokenTtl);
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
  if (code.dpop_jkt !== null && code.dpop_jkt !== jkt)
    throw invalidGrant('The code is bound to another DPoP key (dpop_jkt).');

  const response = await tokenResponse(
    deps,
    code,
    { scope: code.scope, nonce: code.nonce, jti: jtiForCode(codeHash), jkt },
    nowSeconds,
  );
  if (offersRefresh(client, code.scope)) {
    response.refresh_token = await issueRefreshToken(
      deps.db,
      {
        clientId: client.client_id,
        userId: code.user_id,
        scope: code.scope,
        authTime: code.auth_time,
        loginType: code.login_type,
        did: code.did,
        walletAddress: code.wallet_address,
        jkt: isPublic(client) ? jkt : null,
        accessJti: jtiForCode(codeHash),
        familyId: familyOfCode(codeHash),
        claimsSealed: code.claims_sealed,
      },
      nowSeconds,
      deps.refreshTokenTtl,
    );
  }
  return response;
}

/** A code's refresh-token family is named after the code, so a replay of the code finds it. */
const familyOfCode = (codeHash: string) =>
  createHash('sha256').update(`family:${codeHash}`).digest('base64url');

const isPublic = (client: Client) => client.client_secret_hash === null;
const offersRefresh = (client: Client, scope: string) =>
  grantTypesOf(client).includes('refresh_token') && scope.split(' ').includes('offline_access');

/**
 * RFC 6749 §6 with rotation and reuse detection (RFC 9700 §4.14.2). Checks come before the token
 * is marked used, so a request that fails them (another client, another DPoP key) spends nothing.
 */
async function exchangeRefreshToken(
  deps: TokenDeps,
  client: Client,
  request: TokenRequest,
  jkt: string | null,
  nowSeconds: number,
): Promise<TokenResponse> {
  if (request.refresh_token!.length > 512) throw invalidGrant('The refresh token is not valid.');
  const row = await findRefreshToken(deps.db, hashSecret(request.refresh_token!));
  if (!row || row.client_id !== client.client_id) throw invalidGrant('The refresh token is not valid.');
  if (row.revoked_at !== null) throw invalidGrant('The refresh token has been revoked.');
  if (row.used_at !== null) return reuse(deps, row.family_id, nowSeconds);
  if (row.expires_at <= nowSeconds) throw invalidGrant('The refresh token has expired.');
  if (row.jkt !== null && row.jkt !== jkt)
    throw invalidGrant('The refresh token is bound to another DPoP key; send a proof made with that key.');
  const scope = narrowedScope(row.scope, request.scope);

  const successor = await deps.rotateRefreshToken(row, nowSeconds);
  if (!successor) return reuse(deps, row.family_id, nowSeconds);
  const response = await tokenResponse(
    deps,
    row,
    // OIDC Core §12.2: a refreshed identity token has no nonce.
    { scope, nonce: null, jti: jtiForRefreshToken(successor.tokenHash), jkt },
    nowSeconds,
  );
  response.refresh_token = successor.token;
  return response;
}

async function reuse(deps: TokenDeps, familyId: string, nowSeconds: number): Promise<never> {
  await revokeRefreshFamily(deps.db, familyId, nowSeconds, deps.accessTokenTtl);
  throw invalidGrant('The refresh token has been used already; every token of its log-in is revoked.');
}

/** A refresh may ask for less than was granted, never more (RFC 6749 §6); openid stays. */
function narrowedScope(granted: string, requested: string | undefined): string {
  if (requested === undefined) return granted;
  const grantedScopes = granted.split(' ');
  const asked = [...new Set(requested.split(' ').filter(Boolean))];
  const extra = asked.filter((s) => !grantedScopes.includes(s));
  if (extra.length) throw new CofferError('invalid_scope', `The scope was not granted: ${extra.join(' ')}.`);
  if (!asked.includes('openid')) throw new CofferError('invalid_scope', 'The scope must include openid.');
  return grantedScopes.filter((s) => asked.includes(s)).join(' ');
}

/** What a code or a refresh token remembers of the log-in; both rows name it alike. */
interface LogIn {
  client_id: number;
  user_id: number;
  auth_time: number;
  login_type: string;
  did: string;
  wallet_address: string | null;
  /** The disclosed claims of a credential log-in, sealed (login-claims.ts). */
  claims_sealed: string | null;
}

async function tokenResponse(
  deps: TokenDeps,
  login: LogIn,
  issued: Pick<TokenGrant, 'scope' | 'nonce' | 'jti' | 'jkt'>,
  nowSeconds: number,
): Promise<TokenResponse> {
  const grant: TokenGrant = {
    ...issued,
    issuer: deps.issuer,
    clientId: String(login.client_id),
    subject: String(login.user_id),
    authTime: login.auth_time,
    loginType: login.login_type,
    ethAddress: login.wallet_address ? getAddress(login.wallet_address) : null,
    didWalletAddress: login.did,
    lifetimeSeconds: deps.accessTokenTtl,
    claims: login.claims_sealed
      ? openLoginClaims(deps.cipher, login.client_id, login.user_id, login.claims_sealed)
      : undefined,
  };
  const tokens = await signTokens(deps.keys, grant, nowSeconds);
  // Userinfo answers the same claims for this access token, for as long as it lives.
  if (login.claims_sealed) {
    await keepAccessTokenClaims(deps.db, {
      jti: grant.jti,
      user_id: login.user_id,
      claims_sealed: login.claims_sealed,
      expires_at: nowSeconds + tokens.expiresIn,
    });
  }
  return {
    scope: grant.scope,
    token_type: grant.jkt ? 'DPoP' : 'Bearer',
    access_token: tokens.accessToken,
    expire_in: tokens.expiresIn,
    expires_in: tokens.expiresIn,
    id_token: tokens.idToken,
  };
}
