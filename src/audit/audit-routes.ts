import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { callerOf, requireApiToken } from '../clients/api-auth.ts';
import type { Database } from '../db/schema.ts';
import { errorResponses } from '../http/openapi.ts';
import type { AuditContext } from './audit-events.ts';
import { pageAuditEvents } from './audit-list.ts';
import { AuditHeaders, AuditPage, AuditQuery } from './audit-schemas.ts';

/** The actor and request id of an API call authenticated by `x-api-token`. */
export function apiAuditContext(request: FastifyRequest): AuditContext {
  return { actor: `client:${callerOf(request).clientId}`, requestId: request.id };
}

/** `GET /v1/audit`: transport only; the query lives in audit-list.ts. */
export const auditRoutes: FastifyPluginAsyncTypebox<{ db: Kysely<Database> }> = async (app, deps) => {
  app.addHook('onRequest', requireApiToken(deps.db));
  app.get(
    '/v1/audit',
    {
      schema: {
        tags: ['Audit'],
        security: [{ apiToken: [] }],
        summary: "The caller's audit events and, for a master client, its sub-clients', newest first",
        headers: AuditHeaders,
        querystring: AuditQuery,
        response: { 200: AuditPage, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => pageAuditEvents(deps.db, callerOf(request), request.query),
  );
};
