import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiAuditContext } from '../audit/audit-routes.ts';
import { callerOf, requireApiToken, subClientScopeOf } from '../clients/api-auth.ts';
import { errorResponses } from '../http/openapi.ts';
import {
  ApiTokenHeaders,
  ScopedApiTokenHeaders,
  SubClientBody,
  SubClientEnvelope,
  SubClientIdParams,
  SubClientList,
  SubClientListQuery,
} from './subclient-schemas.ts';
import {
  createSubClient,
  pageSubClients,
  readSubClient,
  replaceSubClient,
  type SubClientDeps,
} from './subclient-service.ts';

/** Endpoints 7–10 of the contract: transport only; the rules live in subclient-service.ts. */
export const subClientRoutes: FastifyPluginAsyncTypebox<SubClientDeps> = async (app, deps) => {
  app.addHook('onRequest', requireApiToken(deps.db));
  const security = [{ apiToken: [] }];
  const tags = ['Sub-clients'];

  app.post(
    '/v1/sub_client',
    {
      schema: {
        tags,
        security,
        summary: 'Create a sub-client (master clients only)',
        headers: ApiTokenHeaders,
        body: SubClientBody,
        response: { 201: SubClientEnvelope, ...errorResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const data = await createSubClient(
        deps,
        callerOf(request),
        subClientScopeOf(request),
        request.body,
        apiAuditContext(request),
      );
      reply.code(201);
      return { data };
    },
  );

  app.put(
    '/v1/sub_client/:subclient_id',
    {
      schema: {
        tags,
        security,
        summary: 'Replace the fields of a sub-client (master clients only)',
        headers: ScopedApiTokenHeaders,
        params: SubClientIdParams,
        body: SubClientBody,
        response: { 200: SubClientEnvelope, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (request) => ({
      data: await replaceSubClient(
        deps,
        callerOf(request),
        subClientScopeOf(request),
        request.params.subclient_id,
        request.body,
        apiAuditContext(request),
      ),
    }),
  );

  app.get(
    '/v1/sub_client',
    {
      schema: {
        tags,
        security,
        summary: "List the caller's sub-clients, ordered by client_id",
        headers: ScopedApiTokenHeaders,
        querystring: SubClientListQuery,
        response: { 200: SubClientList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) =>
      pageSubClients(
        deps,
        callerOf(request),
        subClientScopeOf(request),
        request.query.page,
        request.query.per_page,
      ),
  );

  app.get(
    '/v1/sub_client/:subclient_id',
    {
      schema: {
        tags,
        security,
        summary: 'Read one sub-client',
        headers: ScopedApiTokenHeaders,
        params: SubClientIdParams,
        response: { 200: SubClientEnvelope, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({
      data: await readSubClient(
        deps,
        callerOf(request),
        subClientScopeOf(request),
        request.params.subclient_id,
      ),
    }),
  );
};
