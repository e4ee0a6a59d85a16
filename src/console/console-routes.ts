import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ErasureDeps } from '../accounts/account-erasure.ts';
import { pageAuditEvents } from '../audit/audit-list.ts';
import { CofferError, forbidden } from '../errors.ts';
import { expiredCookie } from '../http/cookies.ts';
import { acceptFormBodies } from '../http/form-body.ts';
import { errorResponses } from '../http/openapi.ts';
import { refuseCrossSite } from '../http/same-origin.ts';
import { type InteractionDeps, startInteraction } from '../interaction/interaction-service.ts';
import { startPage } from '../interaction/page-chrome.ts';
import type { IssuerDeps } from '../issuer/issuer-deps.ts';
import { ClientId } from '../subclients/subclient-schemas.ts';
import {
  createSubClient,
  pageSubClients,
  readSubClient,
  replaceSubClient,
  type SubClientDeps,
} from '../subclients/subclient-service.ts';
import type { UserDeps } from '../users/user-service.ts';
import type { VerifierDeps } from '../verifier/verifier-deps.ts';
import {
  type ActingAdmin,
  adminAt,
  adminContext,
  adminsOfSession,
  type ConsoleAct,
  mayDo,
  requireAct,
} from './console-access.ts';
import { consoleAppsRoutes } from './console-apps-routes.ts';
import type { ConsoleGuards } from './console-guards.ts';
import { consoleIssuerRoutes } from './console-issuer-routes.ts';
import { overviewOf } from './console-overview.ts';
import {
  type AuditFilters,
  renderAuditPage,
  renderChooser,
  renderConsoleError,
  renderConsoleSignedOut,
  renderNotAnAdmin,
  renderOverview,
  renderSubClientPage,
  renderSubClientsPage,
  SUBCLIENT_FIELDS,
} from './console-pages.ts';
import {
  CONSOLE_COOKIE,
  type ConsoleSessionRow,
  consoleSessionOfCookie,
  endConsoleSession,
} from './console-sessions.ts';
import { consoleUsersRoutes } from './console-users-routes.ts';
import { consoleVerifierRoutes } from './console-verifier-routes.ts';

export interface ConsoleRouteDeps {
  subClients: SubClientDeps;
  users: UserDeps;
  erasure: ErasureDeps;
  issuer: IssuerDeps;
  verifier: VerifierDeps;
  interactions: InteractionDeps;
  /** Key of the console's anti-forgery token (derived from the master key). */
  pageTokenKey: Uint8Array;
}

const ClientParams = Type.Object({ clientId: ClientId }, { additionalProperties: false });
const FormBody = Type.Record(Type.String(), Type.String({ maxLength: 1000 }));
const AuditPageQuery = Type.Object(
  {
    type: Type.Optional(Type.String({ maxLength: 64 })),
    since: Type.Optional(Type.String({ maxLength: 40 })),
    until: Type.Optional(Type.String({ maxLength: 40 })),
    cursor: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

/** The token of a session's forms: a MAC of the session, so it needs no storage and dies with it. */
const formTokenOf = (key: Uint8Array, session: ConsoleSessionRow) =>
  createHmac('sha256', key).update(`console:${session.id_hash}`).digest('base64url');

const digest = (value: string) => createHash('sha256').update(value).digest();

const notLoggedIn = () =>
  new CofferError('unauthorized', 'You are not logged in to the console; open /console to log in.');

export function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

/** A `datetime-local` value has no zone; the page says its times are UTC. */
const utcTime = (value: string | undefined) =>
  value && /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(value) ? `${value}Z` : value || undefined;

/**
 * What the console's scope needs: form bodies, the same-origin check of writes, and errors as
 * console pages for people. Set once here; every area's plugin is registered inside this scope.
 */
function consoleScope(app: FastifyInstance, publicUrl: string): void {
  acceptFormBodies(app);
  // SameSite=Strict keeps the cookie off cross-site requests; the origin check and the form's
  // token refuse what a same-site page without the token sends. The pages' no-referrer policy
  // makes a browser send `Origin: null` with their forms, so there the browser's own
  // Sec-Fetch-Site, which no page can set, must say the form was this origin's.
  app.addHook('onRequest', async (request) => {
    if (request.method !== 'POST') return;
    const maskedOrigin =
      request.headers.origin === 'null' && request.headers['sec-fetch-site'] === 'same-origin';
    if (!maskedOrigin) refuseCrossSite(request, publicUrl);
  });

  // A person gets a page; a script or a client asking for JSON gets the error body.
  app.setErrorHandler(async (error, request, reply) => {
    if (!(error instanceof CofferError) || wantsJson(request)) throw error;
    const cspNonce = startPage(reply.code(error.status).header('cache-control', 'no-store'));
    return renderConsoleError({ message: error.message, cspNonce });
  });
}

/** The session of a console request, and the administrator a page or a write acts as. */
function consoleGuards(deps: Pick<ConsoleRouteDeps, 'interactions' | 'pageTokenKey'>) {
  const { db } = deps.interactions;
  async function session(request: FastifyRequest): Promise<ConsoleSessionRow> {
    const row = await consoleSessionOfCookie(db, request.headers.cookie);
    if (!row) throw notLoggedIn();
    return row;
  }

  /** A state-changing request: a live session and the token of one of its pages. */
  async function actingSession(request: FastifyRequest, body: Record<string, string>) {
    const row = await session(request);
    const token = body['csrf_token'];
    if (
      typeof token !== 'string' ||
      !timingSafeEqual(digest(token), digest(formTokenOf(deps.pageTokenKey, row)))
    ) {
      throw forbidden('This request did not come from a console page; reload the page and try again.');
    }
    return row;
  }

  /** A page at one client: the session (or the log-in, for a browser) and the administrator there. */
  async function pageAt(
    request: FastifyRequest,
    reply: FastifyReply,
    clientId: number,
  ): Promise<{ admin: ActingAdmin; csrfToken: string; cspNonce: string } | undefined> {
    reply.header('cache-control', 'no-store');
    const row = await consoleSessionOfCookie(db, request.headers.cookie);
    if (!row) {
      if (wantsJson(request)) throw notLoggedIn();
      reply.redirect('/console', 303);
      return undefined;
    }
    const admin = await adminAt(db, row, clientId);
    requireAct(admin, 'read');
    return { admin, csrfToken: formTokenOf(deps.pageTokenKey, row), cspNonce: startPage(reply) };
  }

  /** A write at one client: the page token, the administrator there, then the role — before any read. */
  async function actingAdmin(
    request: FastifyRequest,
    body: Record<string, string>,
    clientId: number,
    act: ConsoleAct,
  ) {
    const row = await actingSession(request, body);
    const admin = await adminAt(db, row, clientId);
    requireAct(admin, act);
    return { row, admin, csrfToken: formTokenOf(deps.pageTokenKey, row) };
  }

  return {
    session,
    actingSession,
    actingAdmin,
    pageAt,
    formToken: (row: ConsoleSessionRow) => formTokenOf(deps.pageTokenKey, row),
  };
}

/**
 * The console (DESIGN.md, The console): transport only. Every page names its client in the path
 * and is answered only for an administrator of that client; every write goes through the same
 * service function as the /v1 route, with the client's own API rights and the administrator as
 * the audit actor.
 */
export const consoleRoutes: FastifyPluginAsyncTypebox<ConsoleRouteDeps> = async (app, deps) => {
  const { db } = deps.interactions;
  const tags = ['Console'];
  const secure = deps.interactions.config.environment === 'production';
  consoleScope(app, deps.interactions.config.publicUrl);
  const shared = consoleGuards(deps);
  const { pageAt, actingSession, actingAdmin } = shared;
  /** What every area's pages share; registered below, they inherit this scope's checks. */
  const guards: ConsoleGuards = {
    actingSession,
    actingAdmin: shared.actingAdmin,
    pageAt,
    formToken: shared.formToken,
    wantsJson,
  };

  app.get(
    '/console',
    {
      schema: {
        tags,
        summary: 'The console (HTML): the log-in, then the client to act for',
        description:
          'Without a console session: a redirect to the log-in. An administrator of one client goes to its overview, of several picks one; someone who administers no client gets 403.',
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const row = await consoleSessionOfCookie(db, request.headers.cookie);
      if (!row) {
        if (wantsJson(request)) throw notLoggedIn();
        const id = await startInteraction(deps.interactions, {
          kind: 'console',
          clientId: null,
          params: '{}',
        });
        return reply.redirect(`/interaction/${id}`, 303);
      }
      const admins = await adminsOfSession(db, row);
      const csrfToken = formTokenOf(deps.pageTokenKey, row);
      if (!admins.length) {
        if (wantsJson(request)) throw forbidden('You are not an administrator of any client of this Coffer.');
        return renderNotAnAdmin({ csrfToken, cspNonce: startPage(reply.code(403)) });
      }
      if (wantsJson(request))
        return {
          clients: admins.map((a) => ({ client_id: a.client_id, name: a.client_name, role: a.role })),
        };
      if (admins.length === 1) return reply.redirect(`/console/clients/${admins[0]!.client_id}`, 303);
      return renderChooser({ admins, csrfToken, cspNonce: startPage(reply) });
    },
  );

  app.get(
    '/console/clients/:clientId',
    { schema: { tags, summary: "A client's console overview (HTML)", params: ClientParams } },
    async (request, reply) => {
      const at = await pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      return renderOverview({ ...at, overview: await overviewOf(db, at.admin) });
    },
  );

  app.get(
    '/console/clients/:clientId/audit',
    {
      schema: {
        tags,
        summary: "A client's audit trail in the console (HTML), filtered and paged as GET /v1/audit",
        params: ClientParams,
        querystring: AuditPageQuery,
      },
    },
    async (request, reply) => {
      const at = await pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      const filters: AuditFilters = {
        type: request.query.type || undefined,
        since: request.query.since || undefined,
        until: request.query.until || undefined,
      };
      const page = await pageAuditEvents(db, at.admin.caller, {
        limit: 50,
        ...(filters.type ? { type: filters.type } : {}),
        ...(filters.since ? { since: utcTime(filters.since) } : {}),
        ...(filters.until ? { until: utcTime(filters.until) } : {}),
        ...(request.query.cursor ? { cursor: request.query.cursor } : {}),
      });
      return renderAuditPage({ ...at, filters, events: page.data, nextCursor: page.next_cursor });
    },
  );

  async function subClientsPage(
    at: { admin: ActingAdmin; csrfToken: string; cspNonce: string },
    extra: Partial<Parameters<typeof renderSubClientsPage>[0]> = {},
  ) {
    const list = at.admin.caller.isMaster
      ? (await pageSubClients(deps.subClients, at.admin.caller, undefined, 1, 100)).data
      : [];
    return renderSubClientsPage({
      ...at,
      subClients: list,
      canCreate: mayDo(at.admin.role, 'subclients'),
      ...extra,
    });
  }

  app.get(
    '/console/clients/:clientId/subclients',
    {
      schema: {
        tags,
        summary: "A master client's sub-clients in the console (HTML): list and create",
        params: ClientParams,
        querystring: Type.Object({ created: Type.Optional(ClientId) }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const at = await pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      return subClientsPage(at, { created: request.query.created });
    },
  );

  app.post(
    '/console/clients/:clientId/subclients',
    {
      schema: {
        tags,
        summary: 'Create a sub-client from the console (an HTML form with the page token)',
        description: 'As POST /v1/sub_client with the client’s rights; owners only. Answers 303 to the list.',
        params: ClientParams,
        body: FormBody,
      },
    },
    async (request, reply) => {
      const { row, admin } = await actingAdmin(request, request.body, request.params.clientId, 'subclients');
      const values = Object.fromEntries(SUBCLIENT_FIELDS.map(([name]) => [name, request.body[name] ?? '']));
      try {
        const created = await createSubClient(
          deps.subClients,
          admin.caller,
          undefined,
          values as Parameters<typeof createSubClient>[3],
          adminContext(admin, request.id),
        );
        reply.header('cache-control', 'no-store');
        return reply.redirect(
          `/console/clients/${admin.caller.clientId}/subclients?created=${created.client_id}`,
          303,
        );
      } catch (error) {
        // A person's mistake in the form comes back in the form, with what they typed.
        if (
          !(error instanceof CofferError) ||
          (error.status !== 400 && error.status !== 409) ||
          wantsJson(request)
        )
          throw error;
        const cspNonce = startPage(reply.code(error.status).header('cache-control', 'no-store'));
        return subClientsPage(
          { admin, csrfToken: formTokenOf(deps.pageTokenKey, row), cspNonce },
          { errors: error.details, errorMessage: error.message, values },
        );
      }
    },
  );

  const SubClientParams = Type.Object(
    { clientId: ClientId, subclientId: ClientId },
    { additionalProperties: false },
  );

  app.get(
    '/console/clients/:clientId/subclients/:subclientId',
    {
      schema: {
        tags,
        summary: 'One sub-client in the console (HTML): a form for owners, its fields for the others',
        params: SubClientParams,
        querystring: Type.Object(
          { updated: Type.Optional(Type.Literal('1')) },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const at = await pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      const subClient = await readSubClient(
        deps.subClients,
        at.admin.caller,
        undefined,
        request.params.subclientId,
      );
      return renderSubClientPage({
        ...at,
        subClient,
        canEdit: mayDo(at.admin.role, 'subclients'),
        updated: request.query.updated === '1',
      });
    },
  );

  app.post(
    '/console/clients/:clientId/subclients/:subclientId',
    {
      schema: {
        tags,
        summary: 'Save a sub-client from the console (an HTML form with the page token)',
        description:
          'As PUT /v1/sub_client/{id} with the client’s rights; owners only. Answers 303 to the page.',
        params: SubClientParams,
        body: FormBody,
      },
    },
    async (request, reply) => {
      const { row, admin } = await actingAdmin(request, request.body, request.params.clientId, 'subclients');
      const id = request.params.subclientId;
      const values = Object.fromEntries(SUBCLIENT_FIELDS.map(([name]) => [name, request.body[name] ?? '']));
      try {
        await replaceSubClient(
          deps.subClients,
          admin.caller,
          undefined,
          id,
          values as Parameters<typeof replaceSubClient>[4],
          adminContext(admin, request.id),
        );
        reply.header('cache-control', 'no-store');
        return reply.redirect(`/console/clients/${admin.caller.clientId}/subclients/${id}?updated=1`, 303);
      } catch (error) {
        if (
          !(error instanceof CofferError) ||
          (error.status !== 400 && error.status !== 409) ||
          wantsJson(request)
        )
          throw error;
        const subClient = await readSubClient(deps.subClients, admin.caller, undefined, id);
        const cspNonce = startPage(reply.code(error.status).header('cache-control', 'no-store'));
        return renderSubClientPage({
          admin,
          subClient,
          canEdit: true,
          errors: error.details,
          errorMessage: error.message,
          values,
          csrfToken: formTokenOf(deps.pageTokenKey, row),
          cspNonce,
        });
      }
    },
  );

  app.post(
    '/console/sign-out',
    {
      schema: {
        tags,
        summary: 'Sign out of the console (an HTML form with the page token)',
        body: FormBody,
        response: { 303: Type.Null(), ...errorResponses(401, 403, 429) },
      },
    },
    async (request, reply) => {
      const row = await actingSession(request, request.body);
      await endConsoleSession(db, row.id_hash);
      reply
        .header('cache-control', 'no-store')
        .header('set-cookie', expiredCookie(CONSOLE_COOKIE, secure, 'Strict'));
      return reply.redirect('/console/signed-out', 303);
    },
  );

  app.get(
    '/console/signed-out',
    { schema: { tags, summary: 'The page after signing out of the console' } },
    async (_request, reply) => renderConsoleSignedOut({ cspNonce: startPage(reply) }),
  );

  await app.register(consoleAppsRoutes, {
    guards,
    db,
    cipher: deps.users.cipher,
    audit: deps.subClients.audit,
  });
  await app.register(consoleUsersRoutes, { guards, users: deps.users, erasure: deps.erasure });
  await app.register(consoleIssuerRoutes, { guards, issuer: deps.issuer });
  await app.register(consoleVerifierRoutes, { guards, verifier: deps.verifier });
};
