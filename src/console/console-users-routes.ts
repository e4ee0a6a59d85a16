import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { type ErasureDeps, eraseAccount } from '../accounts/account-erasure.ts';
import { findAccountInTenant } from '../accounts/account-repository.ts';
import { CofferError, notFound } from '../errors.ts';
import { startPage } from '../interaction/page-chrome.ts';
import { ClientId } from '../subclients/subclient-schemas.ts';
import { createUser, type UserDeps } from '../users/user-service.ts';
import { adminContext, mayDo, requireAct } from './console-access.ts';
import type { ConsoleGuards } from './console-guards.ts';
import { createUserBodyOf, findUserIdByEmail, USER_FIELDS, viewUser } from './console-users.ts';
import { renderEraseConfirmation, renderUserPage, renderUsersPage } from './console-users-pages.ts';

export interface ConsoleUsersDeps {
  guards: ConsoleGuards;
  users: UserDeps;
  erasure: ErasureDeps;
}

const ClientParams = Type.Object({ clientId: ClientId }, { additionalProperties: false });
const UserParams = Type.Object({ clientId: ClientId, userId: ClientId }, { additionalProperties: false });
const FormBody = Type.Record(Type.String(), Type.String({ maxLength: 1000 }));

/**
 * The console's users (DESIGN.md, The console): find one by exact e-mail address, read it, create
 * one as POST /v1/user/create and erase one as DELETE /v1/user/{id}, with the client's own rights
 * in its own tenant. Transport only; console-users.ts has the reads.
 */
export const consoleUsersRoutes: FastifyPluginAsyncTypebox<ConsoleUsersDeps> = async (app, deps) => {
  const { guards, users } = deps;
  const { db } = users;
  const tags = ['Console'];
  const base = (clientId: number) => `/console/clients/${clientId}/users`;

  app.get(
    '/console/clients/:clientId/users',
    {
      schema: {
        tags,
        summary: "A client's users in the console (HTML): find by exact e-mail address, create",
        params: ClientParams,
        querystring: Type.Object({ erased: Type.Optional(ClientId) }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const at = await guards.pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      return renderUsersPage({
        ...at,
        canWrite: mayDo(at.admin.role, 'users'),
        erased: request.query.erased,
      });
    },
  );

  app.post(
    '/console/clients/:clientId/users/find',
    {
      schema: {
        tags,
        summary: 'Find a user by exact e-mail address (an HTML form with the page token)',
        description:
          'The blind-index lookup of sign-up; answers 303 to the user’s page, or the form again (404) when no user of the client has the address. The address travels in the body, never in a URL.',
        params: ClientParams,
        body: FormBody,
      },
    },
    async (request, reply) => {
      const { row, admin } = await guards.actingAdmin(request, request.body, request.params.clientId, 'read');
      const email = request.body['email'] ?? '';
      const userId = await findUserIdByEmail(users, admin.caller.clientId, email);
      reply.header('cache-control', 'no-store');
      if (userId !== undefined) return reply.redirect(`${base(admin.caller.clientId)}/${userId}`, 303);
      if (guards.wantsJson(request)) throw notFound('The user');
      const cspNonce = startPage(reply.code(404));
      return renderUsersPage({
        admin,
        csrfToken: guards.formToken(row),
        cspNonce,
        canWrite: mayDo(admin.role, 'users'),
        email,
        notFound: true,
      });
    },
  );

  app.post(
    '/console/clients/:clientId/users',
    {
      schema: {
        tags,
        summary: 'Create a user from the console (an HTML form with the page token)',
        description:
          'As POST /v1/user/create in the client’s own tenant; owners and operators. Answers 303 to the user’s page.',
        params: ClientParams,
        body: FormBody,
      },
    },
    async (request, reply) => {
      const { row, admin } = await guards.actingAdmin(
        request,
        request.body,
        request.params.clientId,
        'users',
      );
      const values = Object.fromEntries(USER_FIELDS.map(([name]) => [name, request.body[name] ?? '']));
      try {
        const { body, problems } = createUserBodyOf(values);
        if (problems.length)
          throw new CofferError('invalid_request', 'Some fields need another look.', { details: problems });
        const created = await createUser(
          users,
          admin.caller,
          undefined,
          body,
          adminContext(admin, request.id),
        );
        reply.header('cache-control', 'no-store');
        return reply.redirect(`${base(admin.caller.clientId)}/${created.user_id}?created=1`, 303);
      } catch (error) {
        // A person's mistake comes back in the form, with what they typed.
        if (
          !(error instanceof CofferError) ||
          (error.status !== 400 && error.status !== 409) ||
          guards.wantsJson(request)
        )
          throw error;
        const cspNonce = startPage(reply.code(error.status).header('cache-control', 'no-store'));
        return renderUsersPage({
          admin,
          csrfToken: guards.formToken(row),
          cspNonce,
          canWrite: true,
          create: { errors: error.details, errorMessage: error.message, values },
        });
      }
    },
  );

  app.get(
    '/console/clients/:clientId/users/:userId',
    {
      schema: {
        tags,
        summary: 'One user in the console (HTML): ids, credentials count, the profile as userinfo gives it',
        params: UserParams,
        querystring: Type.Object(
          { created: Type.Optional(Type.Literal('1')) },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const at = await guards.pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      const user = await viewUser(users, at.admin.caller.clientId, request.params.userId);
      if (!user) throw notFound('The user');
      return renderUserPage({
        ...at,
        user,
        canErase: mayDo(at.admin.role, 'users'),
        created: request.query.created === '1',
      });
    },
  );

  app.get(
    '/console/clients/:clientId/users/:userId/erase',
    {
      schema: {
        tags,
        summary: 'The confirmation before erasing a user (HTML); owners and operators',
        params: UserParams,
      },
    },
    async (request, reply) => {
      const at = await guards.pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      requireAct(at.admin, 'users');
      const user = await viewUser(users, at.admin.caller.clientId, request.params.userId);
      if (!user) throw notFound('The user');
      return renderEraseConfirmation({ ...at, user });
    },
  );

  app.post(
    '/console/clients/:clientId/users/:userId/erase',
    {
      schema: {
        tags,
        summary: 'Erase a user from the console (the confirmation form, with the page token)',
        description:
          'As DELETE /v1/user/{user_id} in the client’s own tenant; owners and operators; needs confirm=erase. Answers 303 to the users page.',
        params: UserParams,
        body: FormBody,
      },
    },
    async (request, reply) => {
      const { admin } = await guards.actingAdmin(request, request.body, request.params.clientId, 'users');
      if (request.body['confirm'] !== 'erase')
        throw new CofferError(
          'invalid_request',
          'Erasing a user needs the confirmation form; nothing was erased.',
        );
      const tenantId = admin.caller.clientId;
      const userId = request.params.userId;
      const account = await findAccountInTenant(db, userId, tenantId);
      if (!account) throw notFound('The user');
      await eraseAccount(
        deps.erasure,
        { user_id: userId, tenant_id: tenantId },
        adminContext(admin, request.id),
      );
      reply.header('cache-control', 'no-store');
      return reply.redirect(`${base(tenantId)}?erased=${userId}`, 303);
    },
  );
};
