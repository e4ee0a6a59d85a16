import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../http/openapi.ts';
import { FetchQuery, IssuerEntityParams, SubordinateList } from './federation-schemas.ts';
import {
  cofferEntityConfiguration,
  type FederationDeps,
  issuerEntityConfiguration,
  subordinateList,
  subordinateStatement,
} from './federation-service.ts';
import { ENTITY_STATEMENT_MEDIA_TYPE } from './federation-statements.ts';

/** OpenID Federation 1.0 endpoints of Coffer as an intermediate (federation-service.ts); transport only. */
export const federationRoutes: FastifyPluginAsyncTypebox<FederationDeps> = async (app, deps) => {
  const tags = ['Federation'];
  // The media type exactly, without a charset: federation resolvers compare it whole.
  const statement = (body: string) => Buffer.from(body);

  app.get(
    '/.well-known/openid-federation',
    { schema: { tags, summary: "Coffer's Entity Configuration (application/entity-statement+jwt)" } },
    async (_request, reply) => {
      const jwt = await cofferEntityConfiguration(deps);
      return reply.type(ENTITY_STATEMENT_MEDIA_TYPE).send(statement(jwt));
    },
  );

  app.get(
    '/issuers/:clientId/.well-known/openid-federation',
    {
      schema: {
        tags,
        summary: "A tenant issuer's Entity Configuration (authority_hints: Coffer)",
        params: IssuerEntityParams,
      },
    },
    async (request, reply) => {
      const jwt = await issuerEntityConfiguration(deps, Number(request.params.clientId));
      return reply.type(ENTITY_STATEMENT_MEDIA_TYPE).send(statement(jwt));
    },
  );

  app.get(
    '/federation/fetch',
    {
      schema: {
        tags,
        summary: "Coffer's Subordinate Statement about a tenant entity",
        querystring: FetchQuery,
      },
    },
    async (request, reply) => {
      const jwt = await subordinateStatement(deps, request.query.sub);
      return reply.type(ENTITY_STATEMENT_MEDIA_TYPE).send(statement(jwt));
    },
  );

  app.get(
    '/federation/list',
    {
      schema: {
        tags,
        summary: "Coffer's subordinates",
        response: { 200: SubordinateList, ...errorResponses(404) },
      },
    },
    async () => subordinateList(deps),
  );
};
