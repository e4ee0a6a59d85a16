import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Database } from '../db/schema.ts';
import { ClientId } from '../subclients/subclient-schemas.ts';
import { appsOf } from './console-apps.ts';
import { renderAppsPage } from './console-apps-pages.ts';
import type { ConsoleGuards } from './console-guards.ts';

export interface ConsoleAppsDeps {
  guards: ConsoleGuards;
  db: Kysely<Database>;
}

/** The console's apps page: the client's OpenID Connect registrations, read only (console-apps.ts says why). */
export const consoleAppsRoutes: FastifyPluginAsyncTypebox<ConsoleAppsDeps> = async (app, deps) => {
  app.get(
    '/console/clients/:clientId/apps',
    {
      schema: {
        tags: ['Console'],
        summary: "A client's apps in the console (HTML): redirect URIs, kind, grants, wallet log-in",
        description:
          'Read only, for every role; the page names the coffer command an operator runs to change a registration or rotate a secret, since the API gives a client no way to.',
        params: Type.Object({ clientId: ClientId }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const at = await deps.guards.pageAt(request, reply, request.params.clientId);
      if (!at) return reply;
      return renderAppsPage({ ...at, apps: await appsOf(deps.db, at.admin.caller) });
    },
  );
};
