import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { apiAuditContext } from '../audit/audit-routes.ts';
import { callerOf, requireApiToken, subClientScopeOf } from '../clients/api-auth.ts';
import type { Database } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { errorResponses } from '../http/openapi.ts';
import { ScopedApiTokenHeaders } from '../subclients/subclient-schemas.ts';
import { tenantOfCaller } from '../users/user-service.ts';
import { type ErasureDeps, eraseAccount } from './account-erasure.ts';
import { findAccountInTenant } from './account-repository.ts';
import { UserIdParams } from './account-schemas.ts';

export interface AccountRouteDeps extends ErasureDeps {
  db: Kysely<Database>;
}

/** Erasing an account through the API: transport only; account-erasure.ts has the steps. */
export const accountRoutes: FastifyPluginAsyncTypebox<AccountRouteDeps> = async (app, deps) => {
  app.addHook('onRequest', requireApiToken(deps.db));

  app.delete(
    '/v1/user/:user_id',
    {
      schema: {
        tags: ['Users'],
        security: [{ apiToken: [] }],
        summary: "Erase a user of the caller's tenant, or of the sub-client named by x-api-subclient-id",
        description:
          'Removes the account, its profile, credentials, copies and blocks, wallet history, sessions, refresh tokens and pending interactions; its access tokens are refused at once; issuers that delivered by OpenID4VCI are told (credential_deleted); the e-mail and wallet address can sign up again. A user of another tenant is 404.',
        headers: ScopedApiTokenHeaders,
        params: UserIdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const tenantId = await tenantOfCaller(deps, callerOf(request), subClientScopeOf(request));
      const account = await findAccountInTenant(deps.db, request.params.user_id, tenantId);
      if (!account) throw notFound('The user');
      await eraseAccount(deps, { user_id: account.user_id, tenant_id: tenantId }, apiAuditContext(request));
      reply.header('cache-control', 'no-store').code(204);
    },
  );
};
