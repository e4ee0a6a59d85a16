import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { CofferError, notFound } from '../errors.ts';
import { startPage } from '../interaction/page-chrome.ts';
import { qrCodeSvg } from '../interaction/qr-code.ts';
import {
  listIssuerConfigurations,
  putConfiguration,
  removeConfiguration,
} from '../issuer/issuer-configurations.ts';
import type { IssuerDeps } from '../issuer/issuer-deps.ts';
import { findConfigurations } from '../issuer/issuer-repository.ts';
import { ConfigurationId, IssuedCredentialParams, StatusChangeBody } from '../issuer/issuer-schemas.ts';
import { createOffer, requireIssuer } from '../issuer/offers.ts';
import { changeCredentialStatus } from '../issuer/status-changes.ts';
import { ClientId } from '../subclients/subclient-schemas.ts';
import { type ActingAdmin, adminContext, mayDo, requireAct } from './console-access.ts';
import type { ConsoleGuards } from './console-guards.ts';
import {
  checkedConfigurationId,
  configurationFromFields,
  configurationFromJson,
  issuerStateOf,
  offerBodyFromFields,
  pageIssuedCredentials,
  pageOffers,
} from './console-issuer.ts';
import {
  renderConfigurationPage,
  renderCredentialsPage,
  renderDeleteConfiguration,
  renderIssuerNotEnabled,
  renderIssuerPage,
  renderOfferMade,
  renderOffersPage,
} from './console-issuer-pages.ts';

export interface ConsoleIssuerDeps {
  guards: ConsoleGuards;
  issuer: IssuerDeps;
}

/** A form's fields; the JSON editor's configuration may be long. */
const FormBody = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 64_000 }), {
  maxProperties: 120,
});
const ClientParams = Type.Object({ clientId: ClientId }, { additionalProperties: false });
const ConfigurationParams = Type.Object(
  { clientId: ClientParams.properties.clientId, configurationId: ConfigurationId },
  { additionalProperties: false },
);
const CredentialParams = Type.Object(
  { clientId: ClientParams.properties.clientId, credentialId: IssuedCredentialParams.properties.id },
  { additionalProperties: false },
);
const PageQuery = Type.Object(
  { page: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,4}$' })) },
  { additionalProperties: false },
);
const Notice = Type.Optional(Type.Union([Type.Literal('saved'), Type.Literal('deleted')]));

/** A person's mistake in a form comes back in the form; anything else is the console's error page. */
const isFormMistake = (
  error: unknown,
  request: FastifyRequest,
  guards: ConsoleGuards,
): error is CofferError =>
  error instanceof CofferError &&
  (error.status === 400 || error.status === 409) &&
  !guards.wantsJson(request);

/**
 * The console's issuer pages (docs/console.md, Issuer): configurations, offers and what was
 * issued, through the same service functions as /v1/issuer with the client's own rights.
 */
export const consoleIssuerRoutes: FastifyPluginAsyncTypebox<ConsoleIssuerDeps> = async (app, deps) => {
  const { guards, issuer } = deps;
  const tags = ['Console'];
  const at = '/console/clients/:clientId/issuer';

  const acting = guards.actingAdmin;

  const refused = (reply: FastifyReply, error: CofferError) =>
    startPage(reply.code(error.status).header('cache-control', 'no-store'));

  const configurationOf = async (admin: ActingAdmin, id: string) => {
    const found = (await findConfigurations(issuer.db, admin.caller.clientId, [id])).get(id);
    if (!found) throw notFound('The configuration');
    return { id, ...found };
  };

  app.get(
    at,
    {
      schema: {
        tags,
        summary: "The client's issuer in the console (HTML): enabled or how to enable it, its configurations",
        params: ClientParams,
        querystring: Type.Object({ done: Notice }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const page = await guards.pageAt(request, reply, request.params.clientId);
      if (!page) return reply;
      const state = await issuerStateOf(issuer, page.admin.caller.clientId);
      if (!state.enabled) return renderIssuerNotEnabled(page);
      return renderIssuerPage({
        ...page,
        state,
        configurations: await listIssuerConfigurations(issuer, page.admin.caller.clientId),
        canWrite: mayDo(page.admin.role, 'issuer'),
        canOffer: mayDo(page.admin.role, 'offers'),
        notice: request.query.done === 'deleted' ? 'The configuration was deleted.' : undefined,
      });
    },
  );

  app.get(
    `${at}/configurations/new`,
    { schema: { tags, summary: 'A form for a new credential configuration (HTML)', params: ClientParams } },
    async (request, reply) => {
      const page = await guards.pageAt(request, reply, request.params.clientId);
      if (!page) return reply;
      requireAct(page.admin, 'issuer');
      await requireIssuer(issuer, page.admin.caller.clientId);
      return renderConfigurationPage({ ...page, configuration: undefined, canWrite: true });
    },
  );

  app.get(
    `${at}/configurations/:configurationId`,
    {
      schema: {
        tags,
        summary:
          'A credential configuration in the console (HTML): its form for owners, its JSON for the others',
        params: ConfigurationParams,
        querystring: Type.Object({ done: Notice }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const page = await guards.pageAt(request, reply, request.params.clientId);
      if (!page) return reply;
      await requireIssuer(issuer, page.admin.caller.clientId);
      return renderConfigurationPage({
        ...page,
        configuration: await configurationOf(page.admin, request.params.configurationId),
        canWrite: mayDo(page.admin.role, 'issuer'),
        saved: request.query.done === 'saved',
      });
    },
  );

  /** Saves from either form: the common fields over what the configuration was, or the whole JSON. */
  async function save(
    request: FastifyRequest,
    body: Record<string, string>,
    reply: FastifyReply,
    clientId: number,
    existingId: string | undefined,
  ) {
    const { admin, csrfToken } = await acting(request, body, clientId, 'issuer');
    const existing = existingId === undefined ? undefined : await configurationOf(admin, existingId);
    try {
      const id =
        existing?.id ??
        checkedConfigurationId(body['form'] === 'json' ? (body['json_id'] ?? '') : (body['id'] ?? ''));
      const configuration =
        body['form'] === 'json'
          ? configurationFromJson(body['json'] ?? '')
          : configurationFromFields(body, existing);
      if (!existing && (await findConfigurations(issuer.db, clientId, [id])).has(id))
        throw new CofferError(
          'conflict',
          `A configuration ${id} exists already; edit it from the issuer page.`,
        );
      await putConfiguration(issuer, clientId, id, configuration, adminContext(admin, request.id));
      reply.header('cache-control', 'no-store');
      return reply.redirect(
        `/console/clients/${clientId}/issuer/configurations/${encodeURIComponent(id)}?done=saved`,
        303,
      );
    } catch (error) {
      if (!isFormMistake(error, request, guards)) throw error;
      return renderConfigurationPage({
        admin,
        csrfToken,
        cspNonce: refused(reply, error),
        configuration: existing,
        canWrite: true,
        errors: error.details,
        errorMessage: error.message,
        values: body,
      });
    }
  }

  app.post(
    `${at}/configurations`,
    {
      schema: {
        tags,
        summary: 'Create a credential configuration from the console (an HTML form with the page token)',
        description:
          'As PUT /v1/issuer/configurations/{id} for a new id; owners only. Answers 303 to its page.',
        params: ClientParams,
        body: FormBody,
      },
    },
    async (request, reply) => save(request, request.body, reply, request.params.clientId, undefined),
  );

  app.post(
    `${at}/configurations/:configurationId`,
    {
      schema: {
        tags,
        summary: 'Save a credential configuration from the console (an HTML form with the page token)',
        description: 'As PUT /v1/issuer/configurations/{id}; owners only. Answers 303 to its page.',
        params: ConfigurationParams,
        body: FormBody,
      },
    },
    async (request, reply) =>
      save(request, request.body, reply, request.params.clientId, request.params.configurationId),
  );

  app.get(
    `${at}/configurations/:configurationId/delete`,
    {
      schema: {
        tags,
        summary: 'Confirm deleting a credential configuration (HTML)',
        params: ConfigurationParams,
      },
    },
    async (request, reply) => {
      const page = await guards.pageAt(request, reply, request.params.clientId);
      if (!page) return reply;
      requireAct(page.admin, 'issuer');
      await requireIssuer(issuer, page.admin.caller.clientId);
      const { id } = await configurationOf(page.admin, request.params.configurationId);
      return renderDeleteConfiguration({ ...page, id });
    },
  );

  app.post(
    `${at}/configurations/:configurationId/delete`,
    {
      schema: {
        tags,
        summary: 'Delete a credential configuration from the console (an HTML form with the page token)',
        description: 'As DELETE /v1/issuer/configurations/{id}; owners only. Answers 303 to the issuer page.',
        params: ConfigurationParams,
        body: FormBody,
      },
    },
    async (request, reply) => {
      const { admin } = await acting(request, request.body, request.params.clientId, 'issuer');
      await removeConfiguration(
        issuer,
        admin.caller.clientId,
        request.params.configurationId,
        adminContext(admin, request.id),
      );
      reply.header('cache-control', 'no-store');
      return reply.redirect(`/console/clients/${admin.caller.clientId}/issuer?done=deleted`, 303);
    },
  );

  async function offersPage(
    page: { admin: ActingAdmin; csrfToken: string; cspNonce: string },
    chosenId: string | undefined,
    pageText: string | undefined,
    form: { errors?: CofferError['details']; errorMessage?: string; values?: Record<string, string> } = {},
  ) {
    const clientId = page.admin.caller.clientId;
    const list = await pageOffers(issuer, clientId, pageText);
    const configurations = await listIssuerConfigurations(issuer, clientId);
    const chosen = chosenId === undefined ? undefined : configurations.find((c) => c.id === chosenId);
    if (chosenId !== undefined && !chosen) throw notFound('The configuration');
    return renderOffersPage({
      ...page,
      ...form,
      ...list,
      configurations,
      chosen,
      canOffer: mayDo(page.admin.role, 'offers'),
    });
  }

  app.get(
    `${at}/offers`,
    {
      schema: {
        tags,
        summary: "The issuer's offers in the console (HTML), newest first, paged",
        params: ClientParams,
        querystring: PageQuery,
      },
    },
    async (request, reply) => {
      const page = await guards.pageAt(request, reply, request.params.clientId);
      if (!page) return reply;
      return offersPage(page, undefined, request.query.page);
    },
  );

  app.get(
    `${at}/offers/new`,
    {
      schema: {
        tags,
        summary: 'A form for an offer of one configuration, with a field per claim (HTML)',
        params: ClientParams,
        querystring: Type.Object({ configuration: ConfigurationId }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const page = await guards.pageAt(request, reply, request.params.clientId);
      if (!page) return reply;
      requireAct(page.admin, 'offers');
      return offersPage(page, request.query.configuration, undefined);
    },
  );

  app.post(
    `${at}/offers`,
    {
      schema: {
        tags,
        summary: 'Make an offer from the console (an HTML form with the page token)',
        description:
          'As POST /v1/issuer/offers; owners and operators. Answers the page with the QR code, the link and the tx_code (shown once).',
        params: ClientParams,
        body: FormBody,
      },
    },
    async (request, reply) => {
      const { admin, csrfToken } = await acting(request, request.body, request.params.clientId, 'offers');
      const clientId = admin.caller.clientId;
      const configurationId = request.body['configuration'] ?? '';
      const configuration = (await findConfigurations(issuer.db, clientId, [configurationId])).get(
        configurationId,
      );
      if (!configuration) throw notFound('The configuration');
      try {
        const body = offerBodyFromFields(configurationId, configuration, request.body);
        const offer = await createOffer(issuer, clientId, body, adminContext(admin, request.id));
        const link = offer.haip_offer_link ?? offer.offer_link;
        const cspNonce = startPage(reply.header('cache-control', 'no-store'));
        return renderOfferMade({
          admin,
          csrfToken,
          cspNonce,
          offer: { ...offer, offer_link: link },
          qr: await qrCodeSvg(link, 'QR code of the offer, for a wallet on another device'),
        });
      } catch (error) {
        if (!isFormMistake(error, request, guards)) throw error;
        const cspNonce = refused(reply, error);
        return offersPage({ admin, csrfToken, cspNonce }, configurationId, undefined, {
          errors: error.details?.map((d) => ({
            ...d,
            path: fieldOfOfferPath(configuration, configurationId, d.path),
          })),
          errorMessage: error.message,
          values: request.body,
        });
      }
    },
  );

  app.get(
    `${at}/credentials`,
    {
      schema: {
        tags,
        summary:
          'What the issuer issued, in the console (HTML), newest first, paged; revoke, suspend, reinstate',
        params: ClientParams,
        querystring: Type.Object(
          { ...PageQuery.properties, changed: Type.Optional(Type.Literal('1')) },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const page = await guards.pageAt(request, reply, request.params.clientId);
      if (!page) return reply;
      const list = await pageIssuedCredentials(issuer, page.admin.caller.clientId, request.query.page);
      return renderCredentialsPage({
        ...page,
        ...list,
        canChange: mayDo(page.admin.role, 'revocations'),
        notice: request.query.changed === '1' ? 'The status was changed.' : undefined,
      });
    },
  );

  app.post(
    `${at}/credentials/:credentialId/status`,
    {
      schema: {
        tags,
        summary:
          'Revoke, suspend or reinstate an issued credential from the console (an HTML form with the page token)',
        description:
          'As POST /v1/issuer/credentials/{id}/status; owners and operators. Answers 303 to the list.',
        params: CredentialParams,
        body: FormBody,
      },
    },
    async (request, reply) => {
      const { admin } = await acting(request, request.body, request.params.clientId, 'revocations');
      const clientId = admin.caller.clientId;
      const status = request.body['status'];
      if (!StatusChangeBody.properties.status.anyOf.some((s) => s.const === status))
        throw new CofferError('invalid_request', 'The status must be revoked, suspended or valid.');
      await requireIssuer(issuer, clientId);
      await changeCredentialStatus(
        issuer,
        clientId,
        request.params.credentialId,
        status as 'valid' | 'revoked' | 'suspended',
        adminContext(admin, request.id),
      );
      reply.header('cache-control', 'no-store');
      return reply.redirect(`/console/clients/${clientId}/issuer/credentials?changed=1`, 303);
    },
  );
};

/** An offer's claim problem (`/body/claims/{id}/a/b`) names the claim's field in the form. */
function fieldOfOfferPath(
  configuration: { claims: Array<{ path: Array<string | number | null> }> },
  configurationId: string,
  path: string,
): string {
  const prefix = `/body/claims/${configurationId}/`;
  if (!path.startsWith(prefix)) return path;
  const steps = path.slice(prefix.length);
  const index = configuration.claims.findIndex((c) => steps.startsWith(c.path.join('/')));
  return index < 0 ? path : `/body/claim_${index}`;
}
