import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { apiAuditContext } from '../audit/audit-routes.ts';
import { callerOf, requireApiToken } from '../clients/api-auth.ts';
import { CofferError } from '../errors.ts';
import { acceptFormBodies } from '../http/form-body.ts';
import { errorResponses } from '../http/openapi.ts';
import { renderErrorPage, startPage } from '../interaction/page-chrome.ts';
import type { VerifierDeps } from './verifier-deps.ts';
import { createVerifierRequest } from './verifier-requests.ts';
import {
  CreateVerifierRequestBody,
  DcApiResponseBody,
  RequestObjectPost,
  ResultQuery,
  VerifierRequestCreated,
  VerifierRequestParams,
  VerifierResultEnvelope,
  WalletResponseBody,
} from './verifier-schemas.ts';
import {
  fetchRequestObject,
  readVerifierResult,
  receiveDcApiResponse,
  receiveWalletResponse,
  requestForPage,
  requestState,
} from './verifier-service.ts';
import { renderVerifyPage } from './verify-page.ts';

const REQUEST_OBJECT_TYPE = 'application/oauth-authz-req+jwt';

/** The verifier: the tenant's API, the wallet-facing endpoints and the page for people. */
export const verifierRoutes: FastifyPluginAsyncTypebox<VerifierDeps> = async (app, deps) => {
  const tags = ['Verifier'];
  const walletTags = ['Verifier (wallet-facing)'];
  const apiToken = requireApiToken(deps.db);
  // A wallet's request-URI POST and its answer are form-encoded (§5.10, §8.2).
  acceptFormBodies(app);
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  app.post(
    '/v1/verifier/requests',
    {
      onRequest: apiToken,
      schema: {
        tags,
        security: [{ apiToken: [] }],
        summary: 'Ask any wallet for credentials (OpenID4VP 1.0)',
        description:
          'The DCQL query is validated before anything is made. The answer carries the openid4vp:// request for a QR code or link, its request_uri, and a page for people; for dc_api modes, the signed request to hand to navigator.credentials.get. Needs a client made a verifier with `coffer verifier enable` (403 otherwise).',
        body: CreateVerifierRequestBody,
        response: { 201: VerifierRequestCreated, ...errorResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const data = await createVerifierRequest(deps, callerOf(request).clientId, request.body, {
        audit: apiAuditContext(request),
      });
      reply.code(201);
      return { data };
    },
  );

  app.get(
    '/v1/verifier/requests/:id',
    {
      onRequest: apiToken,
      schema: {
        tags,
        security: [{ apiToken: [] }],
        summary: 'The status of a request and, once verified, the claims per query with every check',
        description:
          "Same-device requests (made with redirect_uri) are read with the response_code of the wallet's redirect. Claims are deleted RESULT_RETENTION seconds after the first read; the checks stay.",
        params: VerifierRequestParams,
        querystring: ResultQuery,
        response: { 200: VerifierResultEnvelope, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({
      data: await readVerifierResult(
        deps,
        callerOf(request).clientId,
        request.params.id,
        request.query.response_code,
      ),
    }),
  );

  app.post(
    '/v1/verifier/requests/:id/dc-api-response',
    {
      onRequest: apiToken,
      schema: {
        tags,
        security: [{ apiToken: [] }],
        summary: 'What navigator.credentials.get returned for a dc_api request, with the calling page origin',
        params: VerifierRequestParams,
        body: DcApiResponseBody,
        response: { 200: VerifierResultEnvelope, ...errorResponses(400, 401, 404, 413, 415, 429) },
      },
    },
    async (request) => {
      const clientId = callerOf(request).clientId;
      const { origin, data } = request.body;
      await receiveDcApiResponse(deps, clientId, request.params.id, {
        origin,
        data: data as Record<string, unknown>,
      });
      return { data: await readVerifierResult(deps, clientId, request.params.id, undefined) };
    },
  );

  const requestObjectSchema = (method: string) => ({
    tags: walletTags,
    summary: `The signed request object (${method}; typ oauth-authz-req+jwt, x5c)`,
    params: VerifierRequestParams,
    response: { 200: Type.String({ description: REQUEST_OBJECT_TYPE }), ...errorResponses(400, 404, 429) },
  });

  app.get(
    '/v1/verifier/requests/:id/request-object',
    { schema: requestObjectSchema('GET') },
    async (request, reply) => {
      reply.type(REQUEST_OBJECT_TYPE);
      return fetchRequestObject(deps, request.params.id, {});
    },
  );

  app.post(
    '/v1/verifier/requests/:id/request-object',
    {
      schema: {
        ...requestObjectSchema('POST with wallet_metadata and wallet_nonce, §5.10'),
        body: RequestObjectPost,
      },
    },
    async (request, reply) => {
      reply.type(REQUEST_OBJECT_TYPE);
      return fetchRequestObject(deps, request.params.id, request.body);
    },
  );

  app.post(
    '/v1/verifier/requests/:id/response',
    {
      schema: {
        tags: walletTags,
        summary:
          "The wallet's answer: direct_post.jwt (response) or direct_post (vp_token, state), or its error",
        description:
          'Taken once. Same-device requests answer a redirect_uri carrying a response_code; a response this request cannot read (another key, another state) is refused and leaves it open.',
        params: VerifierRequestParams,
        body: WalletResponseBody,
        response: {
          200: Type.Object({ redirect_uri: Type.Optional(Type.String()) }),
          ...errorResponses(400, 404, 413, 415, 429),
        },
      },
    },
    async (request) => receiveWalletResponse(deps, request.params.id, request.body),
  );

  app.get(
    '/verify/:id',
    {
      schema: {
        tags,
        summary: 'The page for people: QR code, "Open your wallet", and the state as it changes',
        description: 'With Accept: application/json, the state only (never a claim).',
        params: VerifierRequestParams,
      },
    },
    async (request, reply) => {
      const accept = request.headers.accept ?? '';
      if (accept.includes('application/json') && !accept.includes('text/html')) {
        return requestState(deps, request.params.id);
      }
      try {
        const shown = await requestForPage(deps, request.params.id);
        return await renderVerifyPage({ cspNonce: startPage(reply), ...shown });
      } catch (error) {
        if (!(error instanceof CofferError)) throw error;
        const cspNonce = startPage(reply.code(error.status));
        return renderErrorPage({ title: 'This request cannot be shown', message: error.message, cspNonce });
      }
    },
  );
};
