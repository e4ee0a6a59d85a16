import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { findClient } from '../clients/client-repository.ts';
import { CofferError } from '../errors.ts';
import { errorResponses } from '../http/openapi.ts';
import type { EncryptedStore } from '../storage/index.ts';
import { findUserById } from '../users/user-repository.ts';
import { authorizationResponse, issueAuthorizationCode } from './authorization.ts';
import { checkAuthorizationRequest } from './authorize-request.ts';
import { bearerOf, requireBearer } from './bearer.ts';
import { discoveryDocument, OIDC_PATHS } from './discovery.ts';
import { type InteractionDeps, startLoginInteraction } from './interaction-service.ts';
import { renderErrorPage, startPage } from './login-page.ts';
import { TokenRequestBody, TokenResponseBody, UserInfoBody } from './oidc-schemas.ts';
import { sessionOfCookie } from './session-cookie.ts';
import { exchangeAuthorizationCode, type TokenDeps } from './token-service.ts';
import { userInfoClaims } from './userinfo.ts';

export interface OidcRouteDeps {
  interactions: InteractionDeps;
  tokens: TokenDeps;
  store: EncryptedStore;
}

/** HTTP Basic client authentication (RFC 6749 §2.3.1): both parts are form-urlencoded. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = header?.match(/^Basic +([A-Za-z0-9+/]+=*) *$/i);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new CofferError('invalid_client', 'Malformed HTTP Basic credentials.');
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    throw new CofferError('invalid_client', 'Malformed HTTP Basic credentials.');
  }
}

/** Discovery, keys, the authorization endpoint, the token endpoint and userinfo. */
export const oidcRoutes: FastifyPluginAsyncTypebox<OidcRouteDeps> = async (app, deps) => {
  const { db } = deps.tokens;
  const issuer = deps.tokens.issuer;
  const tags = ['OpenID Connect'];

  // RFC 6749 bodies are form-encoded; only this plugin's routes accept them.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      const params = new URLSearchParams(body as string);
      const result: Record<string, string> = {};
      for (const [key, value] of params) {
        if (key in result)
          return done(new CofferError('invalid_request', `The parameter ${key} is given more than once.`));
        result[key] = value;
      }
      done(null, result);
    },
  );

  app.get(
    '/.well-known/openid-configuration',
    { schema: { tags, summary: 'OpenID Provider metadata' } },
    async (_r, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return discoveryDocument(issuer);
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
      const check = await checkAuthorizationRequest(request.query as Record<string, unknown>, (id) =>
        findClient(db, id),
      );
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

  app.post(
    OIDC_PATHS.token,
    {
      schema: {
        tags,
        summary: 'Exchange a one-time code for an access token and an identity token',
        description:
          'JSON (the contract) or application/x-www-form-urlencoded (RFC 6749). Client authentication in the body or with HTTP Basic.',
        body: TokenRequestBody,
        response: { 200: TokenResponseBody, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const body = request.body;
      const basic = basicCredentials(request.headers.authorization);
      if (basic && body.client_secret !== undefined) {
        throw new CofferError(
          'invalid_request',
          'Use one client authentication method, not both Basic and client_secret.',
        );
      }
      if (basic && body.client_id !== undefined && body.client_id !== basic.id) {
        throw new CofferError('invalid_request', 'client_id in the body differs from the Basic credentials.');
      }
      const clientId = basic?.id ?? body.client_id;
      if (clientId === undefined)
        throw new CofferError('invalid_client', 'Client authentication is required.');
      try {
        return await exchangeAuthorizationCode(
          deps.tokens,
          {
            grant_type: body.grant_type,
            code: body.code,
            redirect_uri: body.redirect_uri,
            code_verifier: body.code_verifier,
            client_id: clientId,
            client_secret: basic?.secret ?? body.client_secret,
          },
          request.ip,
        );
      } catch (error) {
        if (basic && error instanceof CofferError && error.code === 'invalid_client') {
          reply.header('www-authenticate', 'Basic realm="coffer"');
        }
        throw error;
      }
    },
  );

  app.get(
    OIDC_PATHS.userinfo,
    {
      onRequest: requireBearer({ db, keys: deps.tokens.keys, issuer }),
      schema: {
        tags,
        security: [{ bearer: [] }],
        summary: 'UserInfo: the person behind an access token',
        response: { 200: UserInfoBody, ...errorResponses(401, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return userInfoClaims(deps.store, bearerOf(request).user);
    },
  );
};
