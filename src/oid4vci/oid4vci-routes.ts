import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CofferError } from '../errors.ts';
import { errorResponses } from '../http/openapi.ts';
import { renderErrorPage, startPage } from '../interaction/page-chrome.ts';
import { sessionOfCookie } from '../interaction/session-cookie.ts';
import { identityOfSession } from '../interaction/session-identity.ts';
import { findAccountsOfIdentity } from '../users/user-repository.ts';
import { listDeferredIssuances } from './deferred-issuances.ts';
import { renderIssuanceResult } from './issuance-page.ts';
import {
  finishAuthorization,
  type IssuanceDeps,
  resultView,
  startIssuance,
  startWalletIssuance,
} from './issuance-service.ts';
import { CallbackQuery, IssuanceList, OfferQuery, StartQuery } from './oid4vci-schemas.ts';

const tags = ['Hosted wallet (OpenID4VCI 1.0)'];

/** A script asks for JSON; a person's browser gets pages. */
const wantsJson = (request: FastifyRequest) => {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
};

/** A refusal as the project's error body (JSON) or as a page that explains it to the person. */
async function answering<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  title: string,
  step: () => Promise<T>,
): Promise<T | string> {
  reply.header('cache-control', 'no-store');
  try {
    return await step();
  } catch (error) {
    if (!(error instanceof CofferError) || wantsJson(request)) throw error;
    const cspNonce = startPage(reply.code(error.status));
    return renderErrorPage({ title, message: error.message, code: error.code, cspNonce });
  }
}

/**
 * An offer or a wallet-initiated start: the issuance interaction is opened (for the browser's
 * session, if any) and the browser sent to it; a refusal is a page or the error JSON.
 */
async function openIssuance(
  deps: IssuanceDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  title: string,
  start: (session: Awaited<ReturnType<typeof sessionOfCookie>>) => Promise<string>,
) {
  return answering(request, reply, title, async () => {
    const id = await start(await sessionOfCookie(deps.db, request.headers.cookie));
    return reply.redirect(`/interaction/${id}`, 303);
  });
}

/** The wallet's OpenID4VCI endpoints: the Credential Offer Endpoint and the redirect URI. */
export const oid4vciRoutes: FastifyPluginAsyncTypebox<IssuanceDeps> = async (app, deps) => {
  app.get(
    '/v1/oid4vci/offer',
    {
      schema: {
        tags,
        summary: 'Credential Offer Endpoint: an issuer offers credentials; the person logs in and decides',
        description:
          'One of `credential_offer` (the offer as JSON) or `credential_offer_uri` (fetched once over HTTPS). Coffer reads the Credential Issuer Metadata and the Authorization Server Metadata, then opens an interaction (`kind` "issuance"); the answer is a redirect to it. An offer is taken once.',
        querystring: OfferQuery,
      },
    },
    async (request, reply) =>
      openIssuance(deps, request, reply, 'This credential offer cannot be used', (session) =>
        startIssuance(deps, request.query, session),
      ),
  );

  app.get(
    '/v1/oid4vci/start',
    {
      schema: {
        tags,
        summary: 'Wallet-initiated issuance: the person asks an issuer for credentials, without an offer',
        description:
          "`credential_issuer` is the issuer's https address (its Credential Issuer Identifier); `credential_configuration_id` optionally names one of its credentials. Coffer reads the issuer's metadata (signed metadata when served, checked against ISSUER_TRUST_ANCHORS) and opens the same interaction as an offer; the person chooses among the issuer's credentials (`credential_configuration_ids` in the consent) and then authorizes at the issuer (authorization code with PKCE, PAR, DPoP and Wallet Attestation where the issuer takes them). The wallet page's \"Add a credential\" form comes here.",
        querystring: StartQuery,
      },
    },
    async (request, reply) =>
      openIssuance(deps, request, reply, 'Credentials cannot be added from this issuer', (session) =>
        startWalletIssuance(deps, request.query, session),
      ),
  );

  app.get(
    '/v1/oid4vci/callback',
    {
      schema: {
        tags,
        summary: "The wallet's redirect URI: the issuer's authorization server returns here with a code",
        description:
          'The `state` must name an issuance started in this browser session; the code is exchanged (PKCE, DPoP when supported) and the credentials are received, checked and stored.',
        querystring: CallbackQuery,
      },
    },
    async (request, reply) =>
      answering(request, reply, 'The credentials could not be added', async () => {
        const session = await sessionOfCookie(deps.db, request.headers.cookie);
        const result = await finishAuthorization(deps, request.query, session);
        if (wantsJson(request)) {
          return reply.send(resultView(result));
        }
        const cspNonce = startPage(reply);
        return renderIssuanceResult({ received: result.received.length, pending: result.pending, cspNonce });
      }),
  );

  app.get(
    '/v1/oid4vci/issuances',
    {
      schema: {
        tags,
        summary: "The browser session's deferred issuances: waiting, delivered, or given up",
        response: { 200: IssuanceList, ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const session = await sessionOfCookie(deps.db, request.headers.cookie);
      const identity = await identityOfSession(deps, session);
      if (!identity) throw new CofferError('unauthorized', 'Log in to your wallet first.');
      const accounts = await findAccountsOfIdentity(deps.db, identity);
      const rows = await listDeferredIssuances(
        deps.db,
        accounts.map((a) => a.user_id),
      );
      return {
        data: rows.map((row) => ({
          credential_issuer: row.credential_issuer,
          credential_configuration_id: row.configuration_id,
          status: row.status,
          failure: row.failure,
          created_at: row.created_at,
        })),
      };
    },
  );
};
