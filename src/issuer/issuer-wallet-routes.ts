import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { CofferError, notFound } from '../errors.ts';
import { matchesIfNoneMatch } from '../http/entity-tags.ts';
import { echoInteractionId } from '../http/fapi-interaction-id.ts';
import { errorResponses } from '../http/openapi.ts';
import { renderErrorPage, startPage } from '../interaction/page-chrome.ts';
import { accessTokenOf } from '../oidc/bearer.ts';
import { dpopHeaderOf, resourceChallenge, verifyDpopProof } from '../oidc/dpop.ts';
import { issueCredentials, issueDeferred } from './credential-endpoint.ts';
import { createCNonce, type IssuanceToken, verifyIssuanceToken } from './issuance-tokens.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import type { IssuerKeys } from './issuer-keys.ts';
import { credentialIssuerMetadata, signMetadata } from './issuer-metadata.ts';
import { listConfigurations } from './issuer-repository.ts';
import {
  CredentialRequestBody,
  CredentialResponseBody,
  DeferredRequestBody,
  IssuerParams,
  NotificationBody,
  OfferParams,
  StatusListParams,
} from './issuer-schemas.ts';
import {
  openEncryptedRequest,
  type ResponseEncryption,
  responseEncryptionOf,
  sealResponse,
} from './message-encryption.ts';
import { receiveNotification } from './notifications.ts';
import { renderOfferPage } from './offer-page.ts';
import { offerByReference } from './offers.ts';
import { servedStatusList } from './status-list-serving.ts';

/**
 * The issuer's wallet-facing endpoints (OpenID4VCI 1.0): metadata, offers by reference, the
 * Nonce, Credential, Deferred and Notification endpoints; status lists; the offer page.
 */
export const issuerWalletRoutes: FastifyPluginAsyncTypebox<IssuerDeps> = async (app, deps) => {
  const tags = ['Issuer'];
  const walletTags = ['Issuer (wallet-facing)'];
  // A credential request may be an encrypted JWT (§10); it is opened by the route.
  app.addContentTypeParser('application/jwt', { parseAs: 'string' }, (_request, body, done) =>
    done(null, body),
  );

  app.get(
    '/v1/status-lists/:id',
    {
      schema: {
        tags: walletTags,
        summary:
          'A status list: Token Status List (statuslist+jwt, or statuslist+cwt when asked) or Bitstring Status List credential',
        description:
          'With ttl, Cache-Control and a weak ETag naming the list version, its signing key and iat; a matching If-None-Match is answered 304.',
        params: StatusListParams,
      },
    },
    async (request, reply) => {
      const served = await servedStatusList(deps, request.params.id, request.headers.accept ?? '');
      reply.header('cache-control', served.cacheControl).header('etag', served.etag).header('vary', 'accept');
      if (matchesIfNoneMatch(request.headers['if-none-match'], served.etag)) return reply.code(304).send();
      reply.type(served.mediaType);
      return typeof served.body === 'string' ? served.body : Buffer.from(served.body);
    },
  );

  // Wallet-facing: one credential issuer per client, under PUBLIC_URL/issuers/{client_id}.
  const issuerOf = async (clientIdText: string): Promise<IssuerKeys> => {
    const keys = await deps.issuerKeys(Number(clientIdText));
    if (!keys) throw notFound('The credential issuer');
    return keys;
  };

  app.get(
    '/.well-known/openid-credential-issuer/issuers/:clientId',
    {
      schema: {
        tags: walletTags,
        summary: 'Credential Issuer Metadata (OpenID4VCI §12.2; signed with Accept: application/jwt)',
        params: IssuerParams,
      },
    },
    async (request, reply) => {
      const keys = await issuerOf(request.params.clientId);
      const client = await deps.db
        .selectFrom('clients')
        .select('name')
        .where('client_id', '=', keys.clientId)
        .executeTakeFirst();
      const metadata = credentialIssuerMetadata(keys, await listConfigurations(deps.db, keys.clientId), {
        authorizationServer: deps.config.publicUrl,
        name: client?.name ?? `Issuer ${keys.clientId}`,
      });
      reply.header('cache-control', 'public, max-age=60').header('vary', 'accept');
      if ((request.headers.accept ?? '').includes('application/jwt')) {
        reply.type('application/jwt');
        return signMetadata(keys, metadata, Math.floor(deps.now().getTime() / 1000));
      }
      return metadata;
    },
  );

  app.get(
    '/issuers/:clientId/offers/:id',
    {
      schema: {
        tags: walletTags,
        summary: 'A credential offer by reference (credential_offer_uri, §4.1.3)',
        params: Type.Object({ ...IssuerParams.properties, ...OfferParams.properties }),
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return offerByReference(deps, (await issuerOf(request.params.clientId)).clientId, request.params.id);
    },
  );

  app.post(
    '/issuers/:clientId/nonce',
    {
      schema: {
        tags: walletTags,
        summary: 'Nonce Endpoint (§7): a fresh c_nonce',
        params: IssuerParams,
        response: { 200: Type.Object({ c_nonce: Type.String() }), ...errorResponses(404, 429) },
      },
    },
    async (request, reply) => {
      const keys = await issuerOf(request.params.clientId);
      reply.header('cache-control', 'no-store');
      return {
        c_nonce: createCNonce(deps.secrets.cNonce, keys.issuerId, Math.floor(deps.now().getTime() / 1000)),
      };
    },
  );

  /** The access token of an issuance, with its DPoP proof when it is bound (RFC 9449 §7). */
  async function issuanceTokenOf(
    request: FastifyRequest,
    keys: IssuerKeys,
    path: string,
  ): Promise<IssuanceToken> {
    try {
      const { scheme, token: raw } = accessTokenOf(request.headers.authorization);
      const token = await verifyIssuanceToken(
        deps.keys,
        { asIssuer: deps.config.publicUrl, issuerId: keys.issuerId },
        raw,
        Math.floor(deps.now().getTime() / 1000),
      );
      if (token.jkt !== null) {
        if (scheme !== 'dpop')
          throw new CofferError(
            'invalid_token',
            'The access token is DPoP-bound; send it with the DPoP scheme.',
          );
        const proof = dpopHeaderOf(request.headers.dpop);
        if (!proof)
          throw new CofferError('invalid_dpop_proof', 'A DPoP proof is required with this access token.');
        const verified = await verifyDpopProof(deps.dpop, proof, {
          method: request.method,
          url: `${keys.issuerId}/${path}`,
          accessToken: raw,
        });
        if (verified.jkt !== token.jkt)
          throw new CofferError(
            'invalid_dpop_proof',
            'The DPoP proof is made with another key than the token is bound to.',
          );
      } else if (scheme === 'dpop') {
        throw new CofferError(
          'invalid_token',
          'The access token is not DPoP-bound; send it as a Bearer token.',
        );
      }
      return token;
    } catch (error) {
      if (
        error instanceof CofferError &&
        ['invalid_token', 'invalid_dpop_proof', 'use_dpop_nonce'].includes(error.code)
      ) {
        throw resourceChallenge(error, deps.dpop);
      }
      throw error;
    }
  }

  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

  /**
   * The body of a (deferred) credential request: JSON, or a compact JWE of that JSON sent as
   * application/jwt (§10), opened and then validated with the same schema as a JSON body. A request
   * asking for an encrypted answer must itself be encrypted (§8.2, §9.1), so that nobody on the
   * way can swap the wallet's key for theirs. Checked before anything is issued.
   */
  async function credentialRequestOf(
    request: FastifyRequest,
    keys: IssuerKeys,
    schema: TSchema,
  ): Promise<{ body: Record<string, unknown>; encryption: ResponseEncryption | null }> {
    let body = request.body;
    const encrypted = typeof body === 'string';
    if (typeof body === 'string') {
      body = await openEncryptedRequest(keys.encryption, body);
      const validate = request.compileValidationSchema(schema, 'body');
      if (!validate(body)) {
        const details = (validate.errors ?? []).map((issue) => ({
          path: `/body${issue.instancePath}`,
          message: issue.message ?? 'is invalid',
        }));
        throw new CofferError(
          'invalid_credential_request',
          `The decrypted request is invalid: ${details[0]?.path} ${details[0]?.message}.`,
          { status: 400, details },
        );
      }
    } else if (!(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
      throw new CofferError(
        'unsupported_media_type',
        'Send the request as application/json, or encrypted as application/jwt.',
      );
    }
    const fields = body as Record<string, unknown>;
    if (fields['credential_response_encryption'] !== undefined && !encrypted) {
      throw new CofferError(
        'invalid_encryption_parameters',
        'A request with credential_response_encryption must itself be encrypted (application/jwt).',
        { status: 400 },
      );
    }
    return { body: fields, encryption: await responseEncryptionOf(fields['credential_response_encryption']) };
  }

  /** The answer, as a JWE to the wallet's key when it asked for one (errors never are, §8.3.1.2). */
  async function answer(reply: FastifyReply, encryption: ResponseEncryption | null, body: object) {
    if (!encryption) return reply.send(body);
    return reply.type('application/jwt').send(await sealResponse(encryption, body));
  }

  /** The same body schema for JSON and, once decrypted, for the JWE (which arrives as text). */
  const jsonOrJwe = (schema: TSchema) => ({
    content: {
      'application/json': { schema },
      'application/jwt': {
        schema: Type.String({ minLength: 1, maxLength: 200_000, description: 'A compact JWE (§10)' }),
      },
    },
  });

  app.post(
    '/issuers/:clientId/credential',
    {
      onSend: echoInteractionId,
      schema: {
        tags: walletTags,
        summary: 'Credential Endpoint (§8): one configuration, one copy per proof key',
        params: IssuerParams,
        body: jsonOrJwe(CredentialRequestBody),
        response: {
          200: CredentialResponseBody,
          202: CredentialResponseBody,
          ...errorResponses(400, 401, 404, 413, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const keys = await issuerOf(request.params.clientId);
      noStore(reply);
      const token = await issuanceTokenOf(request, keys, 'credential');
      const { body, encryption } = await credentialRequestOf(request, keys, CredentialRequestBody);
      const issued = await issueCredentials(deps, keys, token, body);
      reply.code(issued.kind === 'issued' ? 200 : 202);
      return answer(reply, encryption, issued.body);
    },
  );

  app.post(
    '/issuers/:clientId/deferred-credential',
    {
      onSend: echoInteractionId,
      schema: {
        tags: walletTags,
        summary: 'Deferred Credential Endpoint (§9)',
        params: IssuerParams,
        body: jsonOrJwe(DeferredRequestBody),
        response: { 200: CredentialResponseBody, ...errorResponses(400, 401, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const keys = await issuerOf(request.params.clientId);
      noStore(reply);
      const token = await issuanceTokenOf(request, keys, 'deferred-credential');
      const { body, encryption } = await credentialRequestOf(request, keys, DeferredRequestBody);
      return answer(
        reply,
        encryption,
        await issueDeferred(deps, keys, token, body['transaction_id'] as string),
      );
    },
  );

  app.post(
    '/issuers/:clientId/notification',
    {
      onSend: echoInteractionId,
      schema: {
        tags: walletTags,
        summary: 'Notification Endpoint (§11): accepted, failed or deleted',
        params: IssuerParams,
        body: NotificationBody,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 404, 413, 415, 429) },
      },
      // §11.3: a request missing a parameter or malformed is invalid_notification_request.
      attachValidation: true,
    },
    async (request, reply) => {
      const keys = await issuerOf(request.params.clientId);
      noStore(reply);
      const token = await issuanceTokenOf(request, keys, 'notification');
      if (request.validationError) {
        throw new CofferError(
          'invalid_notification_request',
          'The Notification Request needs notification_id and event (strings).',
        );
      }
      await receiveNotification(deps, token, request.body);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/offer/:id',
    {
      schema: {
        tags,
        summary: 'The offer page for people: QR code and "Add to your wallet" link',
        params: OfferParams,
      },
    },
    async (request, reply) => {
      try {
        return await renderOfferPage(deps, request.params.id, startPage(reply));
      } catch (error) {
        if (!(error instanceof CofferError)) throw error;
        const cspNonce = startPage(reply.code(error.status));
        return renderErrorPage({ title: 'This offer cannot be shown', message: error.message, cspNonce });
      }
    },
  );
};
