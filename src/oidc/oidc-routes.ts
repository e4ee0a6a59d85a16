import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { findClient } from '../clients/client-repository.ts';
import { CofferError } from '../errors.ts';
import { expiredCookie } from '../http/cookies.ts';
import { echoInteractionId } from '../http/fapi-interaction-id.ts';
import { acceptFormBodies } from '../http/form-body.ts';
import { errorResponses } from '../http/openapi.ts';
import { type InteractionDeps, startInteraction } from '../interaction/interaction-service.ts';
import { renderErrorPage, renderSignedOutPage, startPage } from '../interaction/page-chrome.ts';
import { endSessionOfCookie, SESSION_COOKIE, sessionOfCookie } from '../interaction/session-cookie.ts';
import type { EncryptedStore } from '../storage/index.ts';
import { findUserById } from '../users/user-repository.ts';
import { authorizationResponse, issueAuthorizationCode } from './authorization.ts';
import type { AuthorizationExtension } from './authorization-extensions.ts';
import { checkAuthorizationRequest } from './authorize-request.ts';
import { bearerOf, requireBearer } from './bearer.ts';
import { clientCredentialsOf } from './client-authentication.ts';
import { discoveryDocument, OIDC_PATHS } from './discovery.ts';
import { currentDpopNonce, dpopHeaderOf, verifyDpopProof } from './dpop.ts';
import { type EndSessionParameters, endSession } from './end-session.ts';
import { accessTokenClaims } from './login-claims.ts';
import { startLoginInteraction } from './login-kind.ts';
import type { LogoutParams } from './logout-kind.ts';
import {
  EndSessionParams,
  PushedRequestBody,
  PushedRequestResponse,
  RevocationBody,
  TokenRequestBody,
  TokenResponseBody,
  UserInfoBody,
} from './oidc-schemas.ts';
import { pushAuthorizationRequest, takePushedRequest } from './pushed-requests.ts';
import { revokeAccessToken } from './revocation.ts';
import { exchangeGrant, type TokenDeps } from './token-service.ts';
import { userInfoClaims } from './userinfo.ts';

export interface OidcRouteDeps {
  interactions: InteractionDeps;
  tokens: TokenDeps;
  store: EncryptedStore;
  /** Authorization requests other services answer (credential issuance, OpenID4VCI §5); read per request. */
  authorizationExtensions: AuthorizationExtension[];
}

/** OAuth endpoints take the form bodies of their RFCs, and JSON (the contract's token request). */
const OAUTH_BODIES = ['application/x-www-form-urlencoded', 'application/json'];

/** RFC 6749 §5.2: a failed HTTP Basic client authentication is answered with its challenge. */
async function withBasicChallenge<T>(
  credentials: { basic: boolean },
  reply: FastifyReply,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (credentials.basic && error instanceof CofferError && error.code === 'invalid_client') {
      reply.header('www-authenticate', 'Basic realm="coffer"');
    }
    throw error;
  }
}

const headerOf = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);

/** Discovery, keys, the authorization endpoint, the token endpoint and userinfo. */
export const oidcRoutes: FastifyPluginAsyncTypebox<OidcRouteDeps> = async (app, deps) => {
  const { db } = deps.tokens;
  const issuer = deps.tokens.issuer;
  const tags = ['OpenID Connect'];

  // RFC 6749 bodies are form-encoded; only this plugin's routes accept them.
  acceptFormBodies(app);

  // Read at the first request: grant extensions register after this plugin.
  let metadata: ReturnType<typeof discoveryDocument> | undefined;
  const providerMetadata = () =>
    (metadata ??= discoveryDocument(
      issuer,
      deps.tokens.grantExtensions.map((e) => e.metadata),
    ));
  app.get(
    '/.well-known/openid-configuration',
    { schema: { tags, summary: 'OpenID Provider metadata' } },
    async (_r, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return providerMetadata();
    },
  );
  // RFC 8414: wallets (OpenID4VCI §12.3) look for the authorization server's metadata here.
  app.get(
    '/.well-known/oauth-authorization-server',
    { schema: { tags, summary: 'OAuth 2.0 Authorization Server metadata (RFC 8414)' } },
    async (_r, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return providerMetadata();
    },
  );

  app.get(
    OIDC_PATHS.jwks,
    { schema: { tags, summary: 'Published signing keys (JWKS)' } },
    async (_r, reply) => {
      reply.header('cache-control', 'public, max-age=60');
      return deps.tokens.keys.jwks();
    },
  );

  app.get(
    OIDC_PATHS.authorization,
    {
      schema: { tags, summary: 'Authorization endpoint: sends the person to log in, then back with a code' },
    },
    async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      const extension = await extensionFor(query);
      if (extension) {
        const outcome = await extension.authorize(query);
        if ('redirectTo' in outcome) return reply.redirect(outcome.redirectTo, 303);
        const cspNonce = startPage(reply.code(400));
        return renderErrorPage({ title: 'This request is not valid', message: outcome.errorPage, cspNonce });
      }
      const check = await resolveAuthorizationRequest(query);
      if (check.kind === 'error_page') {
        const cspNonce = startPage(reply.code(400));
        return renderErrorPage({ title: 'This log-in link is not valid', message: check.message, cspNonce });
      }
      if (check.kind === 'redirect_error') {
        return reply.redirect(
          authorizationResponse(check.request, issuer, {
            error: check.error,
            error_description: check.description,
          }),
          303,
        );
      }
      const authRequest = check.request;
      const session =
        authRequest.prompt !== 'login' ? await sessionOfCookie(db, request.headers.cookie) : undefined;
      // Single sign-on: a live session in the client's tenant answers at once.
      if (session && session.tenant_id === authRequest.clientId) {
        const user = await findUserById(db, session.user_id);
        if (user) {
          const nowSeconds = Math.floor(Date.now() / 1000);
          const code = await issueAuthorizationCode(
            db,
            authRequest,
            user,
            { loginType: session.login_type, authTime: session.auth_time },
            nowSeconds,
          );
          return reply.redirect(authorizationResponse(authRequest, issuer, { code }), 303);
        }
      }
      if (authRequest.prompt === 'none') {
        return reply.redirect(
          authorizationResponse(authRequest, issuer, {
            error: 'login_required',
            error_description: 'The person is not logged in.',
          }),
          303,
        );
      }
      const interactionId = await startLoginInteraction(deps.interactions, authRequest);
      return reply.redirect(`/interaction/${interactionId}`, 303);
    },
  );

  /** The extension (credential issuance) whose request this is, if any. */
  async function extensionFor(params: Record<string, unknown>) {
    for (const extension of deps.authorizationExtensions) {
      if (await extension.handles(params)) return extension;
    }
    return undefined;
  }

  /** A pushed request (RFC 9126 §4) stands for the query, which then only names the client. */
  async function resolveAuthorizationRequest(query: Record<string, unknown>) {
    const find = (id: number) => findClient(db, id);
    const requestUri = query['request_uri'];
    const clientId = query['client_id'];
    if (typeof requestUri !== 'string' || Array.isArray(clientId))
      return checkAuthorizationRequest(query, find);
    const pushed =
      typeof clientId === 'string' && /^[1-9]\d{0,9}$/.test(clientId)
        ? await takePushedRequest(db, requestUri, Number(clientId), Math.floor(Date.now() / 1000))
        : undefined;
    if (!pushed) {
      return {
        kind: 'error_page' as const,
        message: 'The request_uri is not valid for this client_id, has been used or has expired (60 s).',
      };
    }
    return checkAuthorizationRequest(pushed.params, find, { pushed: true, pushedJkt: pushed.dpopJkt });
  }

  app.post(
    OIDC_PATHS.par,
    {
      schema: {
        tags,
        summary: 'Pushed authorization request (RFC 9126)',
        description:
          'The parameters of an authorization request, form-encoded, with client authentication as at the token endpoint. The answer names a request_uri to send to the authorization endpoint with client_id, once, within 60 s. A DPoP header binds the code to its key (RFC 9449 §10.1).',
        consumes: OAUTH_BODIES,
        body: PushedRequestBody,
        response: { 201: PushedRequestResponse, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      // A client that authenticates is a registered one: its request is the OP's, never a wallet's.
      const authenticates =
        request.headers.authorization !== undefined || request.body.client_secret !== undefined;
      const extension = authenticates ? undefined : await extensionFor(request.body);
      if (extension) {
        // Wallets are public clients; a DPoP proof binds the code to its key (RFC 9449 §10.1).
        const proof = dpopHeaderOf(request.headers.dpop);
        const dpopJkt = proof
          ? (await verifyDpopProof(deps.tokens.dpop, proof, { method: 'POST', url: issuer + OIDC_PATHS.par }))
              .jkt
          : null;
        const pushed = await extension.push(request.body, {
          dpopJkt,
          clientAttestation: {
            attestation: headerOf(request.headers['oauth-client-attestation']),
            pop: headerOf(request.headers['oauth-client-attestation-pop']),
          },
        });
        if (proof) reply.header('dpop-nonce', currentDpopNonce(deps.tokens.dpop));
        return reply.code(201).send(pushed);
      }
      const credentials = clientCredentialsOf(request.headers.authorization, request.body);
      const pushed = await withBasicChallenge(credentials, reply, () =>
        pushAuthorizationRequest(
          { db, limiter: deps.tokens.limiter, dpop: deps.tokens.dpop, issuer },
          credentials,
          request.body,
          dpopHeaderOf(request.headers.dpop),
          request.ip,
        ),
      );
      return reply.code(201).send(pushed);
    },
  );

  app.post(
    OIDC_PATHS.token,
    {
      schema: {
        tags,
        summary: 'Exchange a one-time code or a refresh token for an access token and an identity token',
        description:
          'JSON (the contract) or application/x-www-form-urlencoded (RFC 6749). Client authentication in the body or with HTTP Basic (public clients: client_id only). grant_type authorization_code or refresh_token (rotated at every use; a reused one revokes its family). A DPoP header (RFC 9449) binds the access token to its key: token_type DPoP.',
        consumes: OAUTH_BODIES,
        body: TokenRequestBody,
        response: { 200: TokenResponseBody, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const body = request.body;
      // Grant extensions (credential issuance) authenticate wallets their own way, or not at all.
      const extended = deps.tokens.grantExtensions.some((e) =>
        e.handles({ grant_type: body.grant_type, code: body.code, client_id: '', client_secret: undefined }),
      );
      const client = extended
        ? { clientId: body.client_id ?? '', secret: undefined, basic: false }
        : clientCredentialsOf(request.headers.authorization, body);
      const dpop = dpopHeaderOf(request.headers.dpop);
      const answer = await withBasicChallenge(client, reply, () =>
        exchangeGrant(
          deps.tokens,
          {
            grant_type: body.grant_type,
            code: body.code,
            redirect_uri: body.redirect_uri,
            code_verifier: body.code_verifier,
            refresh_token: body.refresh_token,
            scope: body.scope,
            client_id: client.clientId,
            client_secret: client.secret,
            dpop,
            body: body as Record<string, unknown>,
            clientAttestation: {
              attestation: headerOf(request.headers['oauth-client-attestation']),
              pop: headerOf(request.headers['oauth-client-attestation-pop']),
            },
          },
          request.ip,
        ),
      );
      if (dpop) reply.header('dpop-nonce', currentDpopNonce(deps.tokens.dpop));
      return answer;
    },
  );

  app.get(
    OIDC_PATHS.userinfo,
    {
      onRequest: requireBearer({ db, keys: deps.tokens.keys, issuer, dpop: deps.tokens.dpop }),
      onSend: echoInteractionId,
      schema: {
        tags,
        security: [{ bearer: [] }],
        summary: 'UserInfo: the person behind an access token',
        response: { 200: UserInfoBody, ...errorResponses(401, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { user, token } = bearerOf(request);
      const claims = await userInfoClaims(deps.store, user);
      // After a credential log-in, what the credential disclosed (and verified) speaks for the profile.
      const disclosed = await accessTokenClaims(
        db,
        deps.tokens.cipher,
        { jti: token.jti, clientId: token.clientId, userId: user.user_id },
        Math.floor(Date.now() / 1000),
      );
      return disclosed ? { ...claims, ...disclosed } : claims;
    },
  );

  app.post(
    OIDC_PATHS.revocation,
    {
      schema: {
        tags,
        summary: 'Revoke an access token (RFC 7009)',
        description:
          "Form-encoded (RFC 7009) or JSON; client authentication as at the token endpoint. 200 whether or not the token was known, valid or the client's own; only a token of the authenticated client is revoked. Userinfo and the credential endpoints refuse a revoked token at once, on every instance sharing the database.",
        consumes: OAUTH_BODIES,
        body: RevocationBody,
        response: { 200: Type.Object({}), ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const credentials = clientCredentialsOf(request.headers.authorization, request.body);
      await withBasicChallenge(credentials, reply, () =>
        revokeAccessToken(deps.tokens, credentials, request.body.token, request.ip),
      );
      return {};
    },
  );

  const secure = deps.interactions.config.environment === 'production';
  const endSessionHandler = async (
    params: EndSessionParameters,
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    reply.header('cache-control', 'no-store');
    const session = await sessionOfCookie(db, request.headers.cookie);
    const outcome = await endSession({ db, keys: deps.tokens.keys, issuer }, params, session);
    const cspNonce = startPage(reply);
    const host = new URL(issuer).host;
    if (outcome.kind === 'error') {
      reply.code(400);
      return renderErrorPage({
        title: 'This sign-out link is not valid',
        message: outcome.message,
        cspNonce,
      });
    }
    if (outcome.kind === 'confirm') {
      const interactionId = await startInteraction(deps.interactions, {
        kind: 'logout',
        clientId: outcome.clientId,
        params: JSON.stringify({
          returnTo: outcome.returnTo,
          clientName: outcome.clientName,
        } satisfies LogoutParams),
      });
      return reply.redirect(`/interaction/${interactionId}`, 303);
    }
    await endSessionOfCookie(db, request.headers.cookie);
    reply.header('set-cookie', expiredCookie(SESSION_COOKIE, secure));
    if (outcome.returnTo) return reply.redirect(outcome.returnTo, 303);
    return renderSignedOutPage({ cspNonce, host });
  };
  const endSessionSchema = (method: string) => ({
    tags,
    summary: `End session (OpenID Connect RP-Initiated Logout 1.0), parameters in the ${method}`,
    description:
      'With an id_token_hint naming the person of the browser session (or without a session), the session ends at once; otherwise the person is asked to confirm. post_logout_redirect_uri must be registered for the client (coffer client set --post-logout-redirect-uri) and gets state back.',
  });
  app.get(
    OIDC_PATHS.endSession,
    { schema: { ...endSessionSchema('query'), querystring: EndSessionParams } },
    async (request, reply) => endSessionHandler(request.query, request, reply),
  );
  app.post(
    OIDC_PATHS.endSession,
    { schema: { ...endSessionSchema('form body'), consumes: OAUTH_BODIES, body: EndSessionParams } },
    async (request, reply) => endSessionHandler(request.body, request, reply),
  );
};
