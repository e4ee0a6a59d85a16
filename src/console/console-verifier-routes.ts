import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CofferError } from '../errors.ts';
import { startPage } from '../interaction/page-chrome.ts';
import { ClientId } from '../subclients/subclient-schemas.ts';
import type { VerifierDeps } from '../verifier/verifier-deps.ts';
import { listVerifierRequests, verifierRequestOf } from '../verifier/verifier-listing.ts';
import { createVerifierRequest, verifierOf } from '../verifier/verifier-requests.ts';
import { VerifierRequestParams } from '../verifier/verifier-schemas.ts';
import { readVerifierResult } from '../verifier/verifier-service.ts';
import { adminContext, mayDo, requireAct } from './console-access.ts';
import type { ConsoleGuards } from './console-guards.ts';
import {
  VERIFIER_FORM_FIELDS,
  type VerifierFormValues,
  verifierRequestBody,
} from './console-verifier-form.ts';
import { renderVerifierForm, renderVerifierList, renderVerifierRequest } from './console-verifier-pages.ts';

export interface ConsoleVerifierDeps {
  guards: ConsoleGuards;
  verifier: VerifierDeps;
}

const ClientParams = Type.Object({ clientId: ClientId }, { additionalProperties: false });
const RequestParams = Type.Object(
  { clientId: ClientId, requestId: VerifierRequestParams.properties.id },
  { additionalProperties: false },
);
// Trusted issuers are PEM certificates, longer than any other field.
const NewRequestForm = Type.Object(
  {
    csrf_token: Type.Optional(Type.String({ maxLength: 200 })),
    format: Type.Optional(Type.String({ maxLength: 64 })),
    credential_type: Type.Optional(Type.String({ maxLength: 1000 })),
    claims: Type.Optional(Type.String({ maxLength: 20_000 })),
    trusted_issuers: Type.Optional(Type.String({ maxLength: 200_000 })),
    check_status: Type.Optional(Type.String({ maxLength: 10 })),
    expires_in: Type.Optional(Type.String({ maxLength: 20 })),
    client_id_prefix: Type.Optional(Type.String({ maxLength: 64 })),
    callback_url: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
);

/**
 * The console's verifier pages (issue #43): transport only. A new request is the body
 * POST /v1/verifier/requests takes, made by the same service with the client's own id; results
 * are read as GET /v1/verifier/requests/{id} reads them. Role: `verifier` to ask, `read` to look.
 */
export const consoleVerifierRoutes: FastifyPluginAsyncTypebox<ConsoleVerifierDeps> = async (app, deps) => {
  const tags = ['Console'];
  const { pageAt, actingAdmin, formToken, wantsJson } = deps.guards;

  app.get(
    '/console/clients/:clientId/verifier',
    {
      schema: {
        tags,
        summary: "A client's presentation requests in the console (HTML), newest first, paged",
        params: ClientParams,
        querystring: Type.Object(
          { cursor: Type.Optional(Type.String({ maxLength: 200 })) },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const at = await pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      const page = await listVerifierRequests(deps.verifier, at.admin.caller.clientId, {
        cursor: request.query.cursor || undefined,
        limit: 25,
      });
      return renderVerifierList({
        ...at,
        requests: page.data,
        nextCursor: page.next_cursor,
        canCreate: mayDo(at.admin.role, 'verifier'),
      });
    },
  );

  app.get(
    '/console/clients/:clientId/verifier/new',
    {
      schema: { tags, summary: 'The form of a new presentation request (HTML)', params: ClientParams },
    },
    async (request, reply) => {
      const at = await pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      requireAct(at.admin, 'verifier');
      // A client no operator made a verifier is told so before anyone fills the form in.
      await verifierOf(deps.verifier, at.admin.caller.clientId);
      return renderVerifierForm(at);
    },
  );

  app.post(
    '/console/clients/:clientId/verifier/requests',
    {
      schema: {
        tags,
        summary: 'Make a presentation request from the console (an HTML form with the page token)',
        description:
          'Built into the body of POST /v1/verifier/requests and made by the same service with the client’s rights; owners and operators. Answers 303 to the request’s page.',
        params: ClientParams,
        body: NewRequestForm,
      },
    },
    async (request, reply) => {
      const { row, admin } = await actingAdmin(
        request,
        request.body as Record<string, string>,
        request.params.clientId,
        'verifier',
      );
      const values: VerifierFormValues = Object.fromEntries(
        VERIFIER_FORM_FIELDS.map((name) => [name, request.body[name] ?? '']),
      );
      try {
        const created = await createVerifierRequest(
          deps.verifier,
          admin.caller.clientId,
          verifierRequestBody(values),
          { audit: adminContext(admin, request.id) },
        );
        reply.header('cache-control', 'no-store');
        return reply.redirect(
          `/console/clients/${admin.caller.clientId}/verifier/requests/${created.id}`,
          303,
        );
      } catch (error) {
        // A person's mistake comes back in the form, with what they typed and each field's problem.
        if (!(error instanceof CofferError) || error.status !== 400 || wantsJson(request)) throw error;
        const cspNonce = startPage(reply.code(400).header('cache-control', 'no-store'));
        return renderVerifierForm({
          admin,
          values,
          errors: error.details ?? [],
          errorMessage: error.message,
          csrfToken: formToken(row),
          cspNonce,
        });
      }
    },
  );

  app.get(
    '/console/clients/:clientId/verifier/requests/:requestId',
    {
      schema: {
        tags,
        summary: 'One presentation request in the console (HTML): its QR code while open, then the result',
        description:
          'With Accept: application/json, its state only (the page follows it). The result is read as GET /v1/verifier/requests/{id} reads it.',
        params: RequestParams,
      },
    },
    async (request, reply) => {
      const at = await pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      const clientId = at.admin.caller.clientId;
      const shown = await verifierRequestOf(deps.verifier, clientId, request.params.requestId);
      if (wantsJson(request)) {
        reply.type('application/json; charset=utf-8');
        return { status: shown.status, expires_at: shown.expires_at };
      }
      let result: unknown;
      let sameDeviceNote = false;
      if (shown.status !== 'created' && shown.status !== 'retrieved') {
        if (shown.same_device) sameDeviceNote = true;
        else result = await readVerifierResult(deps.verifier, clientId, shown.id, undefined);
      }
      return renderVerifierRequest({
        ...at,
        request: shown,
        result,
        sameDeviceNote,
        retention: deps.verifier.config.resultRetention,
      });
    },
  );
};
