import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requireApiToken } from '../clients/api-auth.ts';
import { errorResponses } from '../http/openapi.ts';
import { type BearerDeps, bearerOf, requireBearer } from '../oidc/bearer.ts';
import { type DeletionDeps, deleteUserCredential } from './credential-deletion.ts';
import {
  CredentialListEnvelope,
  PresentationBody,
  PresentationEnvelope,
  StoreCredentialBody,
  StoredCredentialEnvelope,
} from './credential-schemas.ts';
import {
  type CredentialDeps,
  listUserCredentials,
  presentCredentials,
  storeCredential,
} from './credential-service.ts';

export interface CredentialRouteDeps {
  credentials: CredentialDeps;
  bearer: BearerDeps;
  deletion: DeletionDeps;
}

/** Endpoints 4–6 of the contract: transport only; the rules live in credential-service.ts. */
export const credentialRoutes: FastifyPluginAsyncTypebox<CredentialRouteDeps> = async (app, deps) => {
  const tags = ['Credentials'];
  const bearer = requireBearer(deps.bearer);

  app.post(
    '/v1/vc/issuer/store',
    {
      onRequest: requireApiToken(deps.credentials.db),
      schema: {
        tags,
        security: [{ apiToken: [] }],
        summary:
          "Store an issuer-signed credential (ldp_vc, dc+sd-jwt, mso_mdoc, jwt_vc_json) for one of the service's users",
        description:
          'Every signature and digest is verified: ldp_vc bbs-2023 base proofs (issuer did:key, JSON-LD contexts from the bundled and registered set only); SD-JWT VC, mdoc and VC-JWT issuer signatures (x5c / x5chain certificates, did:key, did:jwk), disclosure and element digests, validity and algorithms. The holder must be a user in your tenants. Without format, an object is ldp_vc and a string is recognised by its shape. 201 when stored, 200 when exactly this credential was stored before (same CID).',
        body: StoreCredentialBody,
        response: {
          200: StoredCredentialEnvelope,
          201: StoredCredentialEnvelope,
          ...errorResponses(400, 401, 409, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const stored = await storeCredential(deps.credentials, callerOf(request), request.body);
      reply.code(stored.created ? 201 : 200);
      return { data: stored.data };
    },
  );

  app.get(
    '/v1/openidc/credentials',
    {
      onRequest: bearer,
      schema: {
        tags,
        security: [{ bearer: [] }],
        summary: "The access token's user's credentials, every format, newest first",
        response: { 200: CredentialListEnvelope, ...errorResponses(401, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { data: await listUserCredentials(deps.credentials, bearerOf(request).user) };
    },
  );

  app.post(
    '/v1/openidc/credentials/proof',
    {
      onRequest: bearer,
      schema: {
        tags,
        security: [{ bearer: [] }],
        summary: "A selective-disclosure presentation of chosen fields of the user's credentials",
        body: PresentationBody,
        response: { 200: PresentationEnvelope, ...errorResponses(400, 401, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { data: await presentCredentials(deps.credentials, bearerOf(request).user, request.body) };
    },
  );

  app.delete(
    '/v1/openidc/credentials/:id',
    {
      onRequest: bearer,
      schema: {
        tags,
        security: [{ bearer: [] }],
        summary: "Delete one of the access token's user's credentials",
        description:
          "The credential's `id` (URL-encoded). It leaves every list and presentation and its blocks are removed; when it came by OpenID4VCI the issuer is notified (credential_deleted). 404 for an id that is not the user's.",
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 2048 }) }),
        response: { 204: Type.Null(), ...errorResponses(401, 404, 429) },
      },
    },
    async (request, reply) => {
      await deleteUserCredential(deps.deletion, bearerOf(request).user, request.params.id);
      reply.header('cache-control', 'no-store').code(204);
    },
  );
};
