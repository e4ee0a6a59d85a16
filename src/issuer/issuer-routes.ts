import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { issuerApiRoutes } from './issuer-api-routes.ts';
import type { IssuerDeps } from './issuer-deps.ts';
import { issuerWalletRoutes } from './issuer-wallet-routes.ts';

/** The issuer: the tenant's API, and what wallets and people reach (status lists, the offer page). */
export const issuerRoutes: FastifyPluginAsyncTypebox<IssuerDeps> = async (app, deps) => {
  await app.register(issuerApiRoutes, deps);
  await app.register(issuerWalletRoutes, deps);
};
