import type { Selectable } from 'kysely';
import type { ClientsTable } from '../db/schema.ts';
import type { AuthorizationRequest } from './authorization.ts';

export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;

/**
 * Every scope OpenID Connect defines (Core §5.4, §11), those this OP does not grant among them:
 * they mean a log-in at any OP, so no credential issuance may claim one.
 */
export const OPENID_SCOPES: readonly string[] = [
  'openid',
  'profile',
  'email',
  'address',
  'phone',
  'offline_access',
];

export type AuthorizeCheck =
  | { kind: 'error_page'; message: string }
  | {
      kind: 'redirect_error';
      request: Pick<AuthorizationRequest, 'redirectUri' | 'state'>;
      error: string;
      description: string;
    }
  | { kind: 'valid'; request: AuthorizationRequest };

type ClientRow = Pick<
  Selectable<ClientsTable>,
  'client_id' | 'redirect_uris' | 'client_secret_hash' | 'grant_types' | 'require_par'
>;

export interface AuthorizeContext {
  /** The parameters came from a pushed authorization request (RFC 9126). */
  pushed: boolean;
  /** The DPoP key of the proof sent at PAR, if any (RFC 9449 §10.1). */
  pushedJkt?: string | null;
}

const single = (query: Record<string, unknown>, name: string): string | undefined => {
  const value = query[name];
  return typeof value === 'string' ? value : undefined;
};

/** RFC 7636: a code challenge is 43–128 characters of the unreserved set. */
const PKCE_CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;
/** A base64url SHA-256 JWK thumbprint. */
const JKT = /^[A-Za-z0-9_-]{43}$/;

/**
 * Checks an authorization request in the order OAuth requires: until client and redirect URI
 * are known to be genuine, nothing may be sent to the redirect URI (error page instead); after
 * that, errors go back to the client with `error` and `state`.
 */
export async function checkAuthorizationRequest(
  query: Record<string, unknown>,
  findClient: (clientId: number) => Promise<ClientRow | undefined>,
  context: AuthorizeContext = { pushed: false },
): Promise<AuthorizeCheck> {
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value))
      return { kind: 'error_page', message: `The parameter ${name} is given more than once.` };
  }
  const clientIdText = single(query, 'client_id');
  if (!clientIdText || !/^[1-9]\d{0,9}$/.test(clientIdText)) {
    return { kind: 'error_page', message: 'The request names no valid client_id.' };
  }
  const client = await findClient(Number(clientIdText));
  if (!client) return { kind: 'error_page', message: 'The client_id is not known here.' };
  const redirectUri = single(query, 'redirect_uri');
  const registered = JSON.parse(client.redirect_uris) as string[];
  if (!redirectUri || !registered.includes(redirectUri)) {
    return { kind: 'error_page', message: 'The redirect_uri is not registered for this client.' };
  }

  const state = single(query, 'state') ?? null;
  const back = (error: string, description: string): AuthorizeCheck => ({
    kind: 'redirect_error',
    request: { redirectUri, state: state && state.length <= 1024 ? state : null },
    error,
    description,
  });
  if (state !== null && state.length > 1024)
    return back('invalid_request', 'state is longer than 1024 characters.');
  if (single(query, 'request')) {
    return back('request_not_supported', 'Request objects are not supported at this endpoint.');
  }
  if (single(query, 'request_uri')) {
    // At PAR (RFC 9126 §2.1); at authorize the route has resolved a pushed request_uri already.
    return back('invalid_request', 'request_uri is only for a pushed authorization request of this client.');
  }
  if (client.require_par === 1 && !context.pushed) {
    return back('invalid_request', 'This client must push its authorization requests (PAR, RFC 9126).');
  }
  const responseType = single(query, 'response_type');
  if (responseType !== 'code')
    return back('unsupported_response_type', 'Only response_type=code is supported.');
  const responseMode = single(query, 'response_mode');
  if (responseMode !== undefined && responseMode !== 'query') {
    return back('invalid_request', 'Only response_mode=query is supported.');
  }
  const scopes = (single(query, 'scope') ?? '').split(' ').filter(Boolean);
  if (!scopes.includes('openid')) return back('invalid_scope', 'The scope must include openid.');
  // Unknown scopes are ignored (OIDC Core §3.1.2.1); the granted scope lists what was kept.
  // offline_access too, for a client not registered for refresh tokens (§11).
  const refreshable = (JSON.parse(client.grant_types) as string[]).includes('refresh_token');
  const scope = SUPPORTED_SCOPES.filter(
    (s) => scopes.includes(s) && (s !== 'offline_access' || refreshable),
  ).join(' ');

  const nonce = single(query, 'nonce') ?? null;
  if (nonce !== null && (nonce.length === 0 || nonce.length > 512))
    return back('invalid_request', 'nonce must be 1–512 characters.');

  const codeChallenge = single(query, 'code_challenge') ?? null;
  const method = single(query, 'code_challenge_method');
  if (codeChallenge !== null) {
    if ((method ?? 'plain') !== 'S256') return back('invalid_request', 'code_challenge_method must be S256.');
    if (!PKCE_CHALLENGE.test(codeChallenge))
      return back('invalid_request', 'code_challenge is not a valid S256 challenge.');
  } else if (method !== undefined) {
    return back('invalid_request', 'code_challenge_method without code_challenge.');
  } else if (client.client_secret_hash === null) {
    return back('invalid_request', 'PKCE (code_challenge with S256) is required for this client.');
  }

  const promptText = single(query, 'prompt');
  const prompts = (promptText ?? '').split(' ').filter(Boolean);
  if (
    prompts.some((p) => !['none', 'login', 'consent', 'select_account'].includes(p)) ||
    (prompts.includes('none') && prompts.length > 1)
  ) {
    return back('invalid_request', 'prompt has an unsupported value.');
  }
  const prompt = prompts.includes('none') ? 'none' : prompts.includes('login') ? 'login' : null;

  const askedJkt = single(query, 'dpop_jkt') ?? null;
  if (askedJkt !== null && !JKT.test(askedJkt))
    return back('invalid_request', 'dpop_jkt must be a base64url SHA-256 JWK thumbprint.');
  const pushedJkt = context.pushedJkt ?? null;
  if (askedJkt !== null && pushedJkt !== null && askedJkt !== pushedJkt)
    return back('invalid_request', 'dpop_jkt differs from the key of the DPoP proof.');
  const dpopJkt = askedJkt ?? pushedJkt;

  return {
    kind: 'valid',
    request: { clientId: client.client_id, redirectUri, scope, state, nonce, codeChallenge, prompt, dpopJkt },
  };
}
