import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { apiAuditContext } from '../audit/audit-routes.ts';
import { callerOf, requireApiToken } from '../clients/api-auth.ts';
import { errorResponses } from '../http/openapi.ts';
import { nextLink, pageIssuedCredentials } from './issued-list.ts';
import { listIssuerConfigurations, putConfiguration, removeConfiguration } from './issuer-configurations.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import {
  ConfigurationBody,
  ConfigurationEnvelope,
  ConfigurationListEnvelope,
  ConfigurationParams,
  CreateOfferBody,
  DeferredClaimsBody,
  IssuedCredentialEnvelope,
  IssuedCredentialParams,
  IssuedCredentialsEnvelope,
  IssuedCredentialsQuery,
  OfferCreated,
  OfferParams,
  OfferTrackingEnvelope,
  StatusChangeBody,
} from './issuer-schemas.ts';
import { completeDeferredOffer, createOffer, offerTracking, requireIssuer } from './offers.ts';
import { changeCredentialStatus, issuedCredentialView } from './status-changes.ts';

/** The issuer's tenant API (x-api-token): configurations, offers, what was issued and its status. */
export const issuerApiRoutes: FastifyPluginAsyncTypebox<IssuerDeps> = async (app, deps) => {
  const tags = ['Issuer'];
  const apiToken = requireApiToken(deps.db);
  const security = [{ apiToken: [] }];

  app.put(
    '/v1/issuer/configurations/:id',
    {
      onRequest: apiToken,
      schema: {
        tags,
        security,
        summary: 'Create or replace a credential configuration',
        description:
          'Any of the four formats; ldp_vc is signed with bbs-2023. The configuration appears in the issuer metadata at once. Needs a client made an issuer with `coffer issuer enable` (403 otherwise).',
        params: ConfigurationParams,
        body: ConfigurationBody,
        response: {
          200: ConfigurationEnvelope,
          201: ConfigurationEnvelope,
          ...errorResponses(400, 401, 403, 409, 413, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const { created, data } = await putConfiguration(
        deps,
        callerOf(request).clientId,
        request.params.id,
        request.body,
        apiAuditContext(request),
      );
      reply.code(created ? 201 : 200);
      return { data };
    },
  );

  app.get(
    '/v1/issuer/configurations',
    {
      onRequest: apiToken,
      schema: {
        tags,
        security,
        summary: "The issuer's credential configurations",
        response: { 200: ConfigurationListEnvelope, ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => ({ data: await listIssuerConfigurations(deps, callerOf(request).clientId) }),
  );

  app.delete(
    '/v1/issuer/configurations/:id',
    {
      onRequest: apiToken,
      schema: {
        tags,
        security,
        summary: 'Delete a credential configuration',
        params: ConfigurationParams,
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await removeConfiguration(
        deps,
        callerOf(request).clientId,
        request.params.id,
        apiAuditContext(request),
      );
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/issuer/offers',
    {
      onRequest: apiToken,
      schema: {
        tags,
        security,
        summary: 'Offer credentials to a wallet (OpenID4VCI 1.0 Credential Offer)',
        description:
          'Single use, expiring. The answer carries the openid-credential-offer:// link for a QR code, the offer by reference, a page for people and, when asked, the tx_code (shown once: give it to the person on another channel). Without claims the issuance is deferred until PUT /v1/issuer/offers/{id}/claims.',
        body: CreateOfferBody,
        response: { 201: OfferCreated, ...errorResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const data = await createOffer(
        deps,
        callerOf(request).clientId,
        request.body,
        apiAuditContext(request),
      );
      reply.code(201).header('cache-control', 'no-store');
      return { data };
    },
  );

  app.get(
    '/v1/issuer/offers/:id',
    {
      onRequest: apiToken,
      schema: {
        tags,
        security,
        summary: 'An offer: its status, what it issued, its events',
        params: OfferParams,
        response: { 200: OfferTrackingEnvelope, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({ data: await offerTracking(deps, callerOf(request).clientId, request.params.id) }),
  );

  app.put(
    '/v1/issuer/offers/:id/claims',
    {
      onRequest: apiToken,
      schema: {
        tags,
        security,
        summary:
          'The claims of a deferred offer: the wallet gets its credential at the Deferred Credential Endpoint',
        params: OfferParams,
        body: DeferredClaimsBody,
        response: { 200: OfferTrackingEnvelope, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429) },
      },
    },
    async (request) => ({
      data: await completeDeferredOffer(
        deps,
        callerOf(request).clientId,
        request.params.id,
        request.body.claims as Record<string, Record<string, unknown>>,
      ),
    }),
  );

  app.get(
    '/v1/issuer/credentials',
    {
      onRequest: apiToken,
      schema: {
        tags,
        security,
        summary: 'What was issued (never the credentials or their claims)',
        description:
          'Oldest first, 1,000 per page. When more follow, a `Link: <…>; rel="next"` header gives the next page (the same query with `cursor`); the last page has none.',
        querystring: IssuedCredentialsQuery,
        response: { 200: IssuedCredentialsEnvelope, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const clientId = callerOf(request).clientId;
      await requireIssuer(deps, clientId);
      const { rows, next } = await pageIssuedCredentials(deps.db, clientId, request.query);
      if (next !== null) reply.header('link', nextLink(deps.config.publicUrl, request.query, next));
      return { data: rows.map((row) => issuedCredentialView(deps.config.publicUrl, row)) };
    },
  );

  app.post(
    '/v1/issuer/credentials/:id/status',
    {
      onRequest: apiToken,
      schema: {
        tags,
        security,
        summary: 'Revoke, suspend or reinstate an issued credential',
        description:
          'Written into its status list at once (wallets and verifiers see it within the list ttl). Revoked is final.',
        params: IssuedCredentialParams,
        body: StatusChangeBody,
        response: {
          200: IssuedCredentialEnvelope,
          ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429),
        },
      },
    },
    async (request) => {
      const clientId = callerOf(request).clientId;
      await requireIssuer(deps, clientId);
      return {
        data: await changeCredentialStatus(
          deps,
          clientId,
          request.params.id,
          request.body.status,
          apiAuditContext(request),
        ),
      };
    },
  );
};
