import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { renderErrorPage, startPage } from '../interaction/page-chrome.ts';
import { sessionOfCookie } from '../interaction/session-cookie.ts';
import { AuthorizeQuery } from './oid4vp-schemas.ts';
import { type PresentationDeps, startPresentation } from './presentation-service.ts';

/** Whether the client asked for JSON rather than HTML (Accept: application/json, no text/html). */
const prefersJson = (accept: string | undefined) =>
  accept?.includes('application/json') === true && !accept.includes('text/html');

/** Endpoint 1 of the contract: the hosted wallet's OpenID4VP authorization endpoint. */
export const oid4vpRoutes: FastifyPluginAsyncTypebox<PresentationDeps> = async (app, deps) => {
  app.get(
    '/v1/oid4vp/authorize',
    {
      schema: {
        tags: ['Hosted wallet (OpenID4VP 1.0)'],
        summary:
          'OpenID4VP authorization request: the person logs in, consents, and the verifier gets a vp_token',
        description:
          'Parameters by value, a signed request object in `request`, or by reference in `request_uri` (request_uri_method get or post). Client identifiers: a registered verifier, `x509_hash:<hash>` (signed requests only) or `redirect_uri:<uri>` (unsigned only). Answers with a redirect to the consent page, an error to the verifier by its response mode once it is authenticated, or an error page.',
        querystring: AuthorizeQuery,
      },
      // Problems with the request are answered as OpenID4VP requires (to the verifier or as a page), not as JSON 400.
      attachValidation: true,
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const session = await sessionOfCookie(deps.db, request.headers.cookie);
      const outcome = await startPresentation(deps, request.query as Record<string, unknown>, session);
      if (outcome.kind === 'interaction') return reply.redirect(`/interaction/${outcome.interactionId}`, 303);
      if (outcome.kind === 'redirect') return reply.redirect(outcome.url, 303);
      // A verifier's developer testing by script gets the OAuth error as JSON; a person gets a page.
      // A peer that could not be reached (a federation's statements) is a 502, not the request's fault.
      const status = outcome.error === 'temporarily_unavailable' ? 502 : 400;
      if (prefersJson(request.headers.accept)) {
        return reply.code(status).send({ error: outcome.error, error_description: outcome.message });
      }
      const cspNonce = startPage(reply.code(status));
      return renderErrorPage({
        title: outcome.title,
        message: outcome.message,
        code: outcome.error,
        cspNonce,
      });
    },
  );
};
