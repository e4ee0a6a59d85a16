import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../http/openapi.ts';
import {
  configuredAnchorResolver,
  RESOLVE_RESPONSE_TYPE,
  type ResolveDeps,
  resolveEntity,
} from './federation-resolve.ts';
import {
  asList,
  FetchQuery,
  IssuerEntityParams,
  ListQuery,
  ResolveQuery,
  SubordinateList,
  VerifierEntityParams,
} from './federation-schemas.ts';
import {
  cofferEntityConfiguration,
  issuerEntityConfiguration,
  subordinateList,
  subordinateStatement,
  verifierEntityConfiguration,
} from './federation-service.ts';
import { ENTITY_STATEMENT_MEDIA_TYPE } from './federation-statements.ts';

/** OpenID Federation 1.0 endpoints of Coffer as an intermediate (federation-service.ts); transport only. */
export const federationRoutes: FastifyPluginAsyncTypebox<ResolveDeps> = async (app, deps) => {
  const tags = ['Federation'];
  // The media type exactly, without a charset: federation resolvers compare it whole.
  const statement = (body: string) => Buffer.from(body);
  const configured = configuredAnchorResolver(deps);

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
    '/verifiers/:clientId/.well-known/openid-federation',
    {
      schema: {
        tags,
        summary: "A tenant verifier's Entity Configuration (authority_hints: Coffer)",
        description:
          'openid_credential_verifier metadata: jwks holds the request-signing key and the static response encryption key.',
        params: VerifierEntityParams,
      },
    },
    async (request, reply) => {
      const jwt = await verifierEntityConfiguration(deps, Number(request.params.clientId));
      return reply.type(ENTITY_STATEMENT_MEDIA_TYPE).send(statement(jwt));
    },
  );

  app.get(
    '/federation/resolve',
    {
      schema: {
        tags,
        summary:
          'Resolved metadata and trust chain of one of Coffer’s entities (application/resolve-response+jwt)',
        description:
          'OpenID Federation 1.0 §8.3. Only Coffer and its tenant entities are resolved, to Coffer itself or an anchor of FEDERATION_TRUST_ANCHORS; errors as §8.9 (invalid_subject, invalid_trust_anchor, invalid_trust_chain; 502 when a superior cannot be reached).',
        querystring: ResolveQuery,
      },
    },
    async (request, reply) => {
      const jwt = await resolveEntity(deps, configured, {
        sub: request.query.sub,
        trust_anchor: request.query.trust_anchor,
        entity_type: asList(request.query.entity_type),
      });
      return reply.type(`application/${RESOLVE_RESPONSE_TYPE}`).send(statement(jwt));
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
        querystring: ListQuery,
        response: { 200: SubordinateList, ...errorResponses(400, 404) },
      },
    },
    async (request) => {
      const entityTypes = asList(request.query.entity_type);
      return subordinateList(deps, {
        ...(entityTypes ? { entityTypes } : {}),
        ...(request.query.intermediate !== undefined ? { intermediate: request.query.intermediate } : {}),
      });
    },
  );
};
