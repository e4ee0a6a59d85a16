import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AuditContext } from '../audit/audit-events.ts';
import { CofferError } from '../errors.ts';
import { startPage } from '../interaction/page-chrome.ts';
import { ClientId } from '../subclients/subclient-schemas.ts';
import { type ActingAdmin, adminContext, mayDo, requireAct } from './console-access.ts';
import { appsOf } from './console-apps.ts';
import {
  type ConsoleAppsActDeps,
  createApp,
  reachableApp,
  rotateAppSecret,
  setAppWalletLogin,
  updateApp,
} from './console-apps-acts.ts';
import {
  type AppsProblem,
  renderAppSecret,
  renderAppsPage,
  renderRotateConfirmation,
} from './console-apps-pages.ts';
import type { ConsoleGuards } from './console-guards.ts';
import type { ConsoleSessionRow } from './console-sessions.ts';

export interface ConsoleAppsDeps extends ConsoleAppsActDeps {
  guards: ConsoleGuards;
}

const ClientParams = Type.Object({ clientId: ClientId }, { additionalProperties: false });
const AppParams = Type.Object({ clientId: ClientId, appId: ClientId }, { additionalProperties: false });
const FormBody = Type.Record(Type.String(), Type.String({ maxLength: 1000 }));
/** A wallet log-in configuration may carry PEM certificates of trusted issuers. */
const WalletBody = Type.Record(Type.String(), Type.String({ maxLength: 64_000 }));

/**
 * The console's apps page: the client's OpenID Connect registrations, and for an owner the forms
 * that create an app (a master's sub-client), change its URIs and grants, rotate its secret and
 * turn wallet log-in on or off. Console only, never under /v1: docs/console.md says why.
 */
export const consoleAppsRoutes: FastifyPluginAsyncTypebox<ConsoleAppsDeps> = async (app, deps) => {
  const { guards, db } = deps;
  const tags = ['Console'];
  const appsPath = (admin: ActingAdmin) => `/console/clients/${admin.caller.clientId}/apps`;

  /** A person's mistake comes back on the apps page, with what they typed; the rest is thrown. */
  async function refused(
    request: FastifyRequest,
    reply: FastifyReply,
    error: unknown,
    at: { row: ConsoleSessionRow; admin: ActingAdmin },
    problem: Omit<AppsProblem, 'message' | 'details'>,
  ) {
    if (!(error instanceof CofferError) || error.status !== 400 || guards.wantsJson(request)) throw error;
    const cspNonce = startPage(reply.code(400).header('cache-control', 'no-store'));
    return renderAppsPage({
      admin: at.admin,
      csrfToken: guards.formToken(at.row),
      cspNonce,
      apps: await appsOf(db, at.admin.caller),
      canWrite: true,
      problem: { ...problem, message: error.message, details: error.details },
    });
  }

  /**
   * A change to one app's registration from its form: an owner of a client that reaches the app,
   * the form again with the reason when refused, else 303 to the apps page.
   */
  async function changeApp(
    request: FastifyRequest,
    reply: FastifyReply,
    params: { clientId: number; appId: number },
    body: Record<string, string>,
    act: (
      deps: ConsoleAppsActDeps,
      appId: number,
      body: Record<string, string>,
      context: AuditContext,
    ) => Promise<void>,
  ) {
    const at = await guards.actingAdmin(request, body, params.clientId, 'apps');
    const target = await reachableApp(db, at.admin, params.appId);
    try {
      await act(deps, target.client_id, body, adminContext(at.admin, request.id));
    } catch (error) {
      return refused(request, reply, error, at, { appId: target.client_id, values: body });
    }
    reply.header('cache-control', 'no-store');
    return reply.redirect(`${appsPath(at.admin)}?updated=${target.client_id}`, 303);
  }

  app.get(
    '/console/clients/:clientId/apps',
    {
      schema: {
        tags,
        summary: "A client's apps in the console (HTML): redirect URIs, kind, grants, wallet log-in",
        description: 'Every role reads; an owner gets the forms that change the registrations.',
        params: ClientParams,
        querystring: Type.Object({ updated: Type.Optional(ClientId) }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const at = await guards.pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      return renderAppsPage({
        ...at,
        apps: await appsOf(db, at.admin.caller),
        canWrite: mayDo(at.admin.role, 'apps'),
        updated: request.query.updated,
      });
    },
  );

  app.post(
    '/console/clients/:clientId/apps',
    {
      schema: {
        tags,
        summary: 'Create an app: a sub-client of a master client (an HTML form with the page token)',
        description:
          'Owners of a master client. Answers the page that shows the new client secret once (Coffer keeps only its hash).',
        params: ClientParams,
        body: FormBody,
      },
    },
    async (request, reply) => {
      const at = await guards.actingAdmin(request, request.body, request.params.clientId, 'apps');
      try {
        const created = await createApp(deps, at.admin, request.body, adminContext(at.admin, request.id));
        const cspNonce = startPage(reply.code(201).header('cache-control', 'no-store'));
        return renderAppSecret({
          admin: at.admin,
          csrfToken: at.csrfToken,
          cspNonce,
          appId: created.client_id,
          secret: created.client_secret,
          created: true,
        });
      } catch (error) {
        return refused(request, reply, error, at, { appId: 'new', values: request.body });
      }
    },
  );

  app.post(
    '/console/clients/:clientId/apps/:appId',
    {
      schema: {
        tags,
        summary: "Change an app's redirect URIs, post-logout URIs and refresh grant (an HTML form)",
        description:
          'Owners; the app must be the client or its sub-client (else 404). Answers 303 to the apps page.',
        params: AppParams,
        body: FormBody,
      },
    },
    (request, reply) => changeApp(request, reply, request.params, request.body, updateApp),
  );

  app.post(
    '/console/clients/:clientId/apps/:appId/wallet-login',
    {
      schema: {
        tags,
        summary: 'Turn log-in with a wallet off, or on with a configuration (an HTML form)',
        description:
          'Owners; wallet_login=off, or wallet_login=on with wallet_login_json as `coffer client set --wallet-login` takes it. Answers 303 to the apps page.',
        params: AppParams,
        body: WalletBody,
      },
    },
    (request, reply) => changeApp(request, reply, request.params, request.body, setAppWalletLogin),
  );

  app.get(
    '/console/clients/:clientId/apps/:appId/rotate',
    {
      schema: {
        tags,
        summary: "The confirmation before rotating an app's client secret (HTML); owners",
        params: AppParams,
      },
    },
    async (request, reply) => {
      const at = await guards.pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      requireAct(at.admin, 'apps');
      return renderRotateConfirmation({ ...at, app: await reachableApp(db, at.admin, request.params.appId) });
    },
  );

  app.post(
    '/console/clients/:clientId/apps/:appId/rotate',
    {
      schema: {
        tags,
        summary: "Rotate an app's client secret (the confirmation form, with the page token)",
        description:
          'Owners; needs confirm=rotate. Answers the page that shows the new secret once; the old one stops working.',
        params: AppParams,
        body: FormBody,
      },
    },
    async (request, reply) => {
      const at = await guards.actingAdmin(request, request.body, request.params.clientId, 'apps');
      const target = await reachableApp(db, at.admin, request.params.appId);
      if (request.body['confirm'] !== 'rotate')
        throw new CofferError(
          'invalid_request',
          'Rotating a secret needs the confirmation form; nothing changed.',
        );
      const rotated = await rotateAppSecret(deps, target.client_id, adminContext(at.admin, request.id));
      const cspNonce = startPage(reply.header('cache-control', 'no-store'));
      return renderAppSecret({
        admin: at.admin,
        csrfToken: at.csrfToken,
        cspNonce,
        appId: target.client_id,
        secret: rotated.client_secret,
        created: false,
      });
    },
  );
};
