import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf, requireApiToken, subClientScopeOf } from '../clients/api-auth.ts';
import { errorResponses } from '../http/openapi.ts';
import { ScopedApiTokenHeaders } from '../subclients/subclient-schemas.ts';
import { CreatedUserEnvelope, CreateUserBody } from './user-schemas.ts';
import { createUser, type UserDeps } from './user-service.ts';

/** Endpoint 11 of the contract: transport only; the rules live in user-service.ts. */
export const userRoutes: FastifyPluginAsyncTypebox<UserDeps> = async (app, deps) => {
  app.addHook('onRequest', requireApiToken(deps.db));

  app.post(
    '/v1/user/create',
    {
      schema: {
        tags: ['Users'],
        security: [{ apiToken: [] }],
        summary: "Create a user in the caller's tenant, or in the sub-client named by x-api-subclient-id",
        headers: ScopedApiTokenHeaders,
        body: CreateUserBody,
        response: { 201: CreatedUserEnvelope, ...errorResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const data = await createUser(deps, callerOf(request), subClientScopeOf(request), request.body, {
        actor: `client:${callerOf(request).clientId}`,
        requestId: request.id,
      });
      reply.code(201);
      return { data };
    },
  );
};
