import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CofferError } from '../errors.ts';
import { expiredCookie, sessionCookie } from '../http/cookies.ts';
import { errorResponses } from '../http/openapi.ts';
import { refuseCrossSite } from '../http/same-origin.ts';
import { logoOrigins, renderIssuancePage } from '../oid4vci/issuance-page.ts';
import {
  decideIssuance,
  describeIssuance,
  type IssuanceDeps,
  resultView,
} from '../oid4vci/issuance-service.ts';
import { renderConsentPage } from '../oid4vp/consent-page.ts';
import { decideConsent, describeConsent, type WalletDeps } from '../oid4vp/wallet-service.ts';
import { renderLogoutConfirmPage } from '../oidc/logout-page.ts';
import {
  ConsentBody,
  EmailLoginBody,
  EmailVerifyBody,
  InteractionParams,
  InteractionResult,
  LogoutDecisionBody,
  WalletLoginBody,
} from '../oidc/oidc-schemas.ts';
import {
  checkPageToken,
  decideLogout,
  describeInteraction,
  type FinishedLogin,
  forgetInteractionIdentity,
  type InteractionDeps,
  liveInteraction,
  logInWithSiwe,
  sendEmailCode,
  verifyEmailCode,
} from './interaction-service.ts';
import { renderLoginPage } from './login-page.ts';
import { renderErrorPage, startPage } from './page-chrome.ts';
import { endSessionOfCookie, SESSION_COOKIE } from './session-cookie.ts';

/** Browsers mark every fetch with Origin (POST) and Sec-Fetch-Site; headless clients send neither. */
function fromBrowser(request: FastifyRequest): boolean {
  return request.headers.origin !== undefined || request.headers['sec-fetch-site'] !== undefined;
}

function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

const unexpected = (field: string, what: string) =>
  new CofferError('invalid_request', `${field} does not belong in the answer to ${what}.`, {
    details: [{ path: `/body/${field}`, message: `is not taken for ${what}` }],
  });

export interface InteractionRouteDeps {
  interactions: InteractionDeps;
  wallet: WalletDeps;
  issuance: IssuanceDeps;
}

export const interactionRoutes: FastifyPluginAsyncTypebox<InteractionRouteDeps> = async (app, options) => {
  const { interactions: deps, wallet, issuance } = options;
  const tags = ['Log-in interaction'];
  // Before the body is read or validated: a cross-site request, or a browser's request without
  // the page's token, gets nothing but 403.
  app.addHook('onRequest', async (request) => {
    if (request.method !== 'POST') return;
    refuseCrossSite(request, deps.config.publicUrl);
    if (fromBrowser(request)) {
      const token = request.headers['x-csrf-token'];
      const id = (request.params as { id?: string }).id ?? '';
      await checkPageToken(deps, id, typeof token === 'string' ? token : undefined);
    }
  });
  const secure = deps.config.environment === 'production';
  const finish = (reply: FastifyReply, login: FinishedLogin) => {
    if (login.sessionId) {
      reply.header(
        'set-cookie',
        sessionCookie(SESSION_COOKIE, login.sessionId, login.sessionMaxAgeSeconds, secure),
      );
    }
    reply.header('cache-control', 'no-store');
    return login.redirectTo ? { redirect_to: login.redirectTo } : { next: login.next };
  };

  // Browsers ask every site for /favicon.ico; a 404 would log an error in the console of every
  // log-in and consent page. No content (cached for a day) says there is no icon.
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) =>
    reply.code(204).header('cache-control', 'public, max-age=86400').send(),
  );

  app.get(
    '/interaction/:id',
    {
      schema: {
        tags,
        summary: 'The log-in page (HTML), or with Accept: application/json what a headless client needs',
        params: InteractionParams,
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const id = request.params.id;
      if (wantsJson(request)) {
        const view = await describeInteraction(deps, id);
        if (view.kind === 'issuance') return { ...view, issuance: await describeIssuance(issuance, id) };
        return view.kind === 'consent' ? { ...view, consent: await describeConsent(wallet, id) } : view;
      }
      const cspNonce = startPage(reply);
      try {
        const view = await describeInteraction(deps, id);
        if (view.kind === 'issuance') {
          const described = await describeIssuance(issuance, id);
          // The issuer's logo is the one image from elsewhere the page may load.
          const pageNonce = startPage(reply, logoOrigins(described));
          return renderIssuancePage({
            interactionId: view.id,
            csrfToken: view.csrf_token,
            siwe: view.siwe,
            cspNonce: pageNonce,
            loggedIn: view.logged_in,
            issuance: described,
          });
        }
        if (view.kind === 'logout') {
          return renderLogoutConfirmPage({
            interactionId: view.id,
            csrfToken: view.csrf_token,
            cspNonce,
            host: new URL(deps.config.publicUrl).host,
            clientName: view.client.name || null,
          });
        }
        if (view.kind === 'consent') {
          return renderConsentPage({
            interactionId: view.id,
            csrfToken: view.csrf_token,
            siwe: view.siwe,
            cspNonce,
            loggedIn: view.logged_in,
            consent: await describeConsent(wallet, id),
            privacyLink: view.client.privacy_link,
          });
        }
        return renderLoginPage({
          tenantName: view.client.name,
          interactionId: view.id,
          siwe: view.siwe,
          csrfToken: view.csrf_token,
          cspNonce,
          privacyLink: view.client.privacy_link ?? undefined,
        });
      } catch (error) {
        if (!(error instanceof CofferError)) throw error;
        reply.code(error.status);
        return renderErrorPage({ title: 'This page cannot continue', message: error.message, cspNonce });
      }
    },
  );

  const postSchema = (
    summary: string,
    body: typeof WalletLoginBody | typeof EmailLoginBody | typeof EmailVerifyBody,
  ) => ({
    tags,
    summary,
    params: InteractionParams,
    body,
    response: {
      200: InteractionResult,
      202: InteractionResult,
      ...errorResponses(400, 403, 404, 413, 415, 429),
    },
  });

  app.post(
    '/interaction/:id/login/wallet',
    {
      schema: postSchema('Log in with Sign-In with Ethereum (EIP-4361, EIP-191 signature)', WalletLoginBody),
    },
    async (request, reply) => {
      const body = request.body as { message: string; signature: string };
      return finish(reply, await logInWithSiwe(deps, request.params.id, body, request.ip));
    },
  );

  app.post(
    '/interaction/:id/login/email',
    { schema: postSchema('Send a 6-digit one-time code to an e-mail address', EmailLoginBody) },
    async (request, reply) => {
      await sendEmailCode(
        deps,
        request.params.id,
        request.body as { email: string; recaptcha_token?: string },
        request.ip,
      );
      reply.code(202);
      return { next: 'email_verify' };
    },
  );

  app.post(
    '/interaction/:id/login/email/verify',
    { schema: postSchema('Log in with the one-time code (5 tries, 10 minutes)', EmailVerifyBody) },
    async (request, reply) => {
      return finish(
        reply,
        await verifyEmailCode(deps, request.params.id, request.body as { code: string }, request.ip),
      );
    },
  );

  app.post(
    '/interaction/:id/consent',
    {
      schema: {
        tags,
        summary: 'Approve or decline a presentation request (OpenID4VP) or a credential offer (OpenID4VCI)',
        description:
          'A presentation: selections: {<DCQL credential query id>: <credential id> or [ids] where multiple}. The answer goes to the verifier by its response mode; redirect_to is where the browser goes next (next "done" when the verifier named nothing). A credential offer: tx_code when the offer asks for one, account (the DID of one of the listed accounts) when the identity has several, credential_configuration_ids (which of the listed credentials) in an issuance started from the wallet; the answer lists what was received, or redirect_to names the issuer\'s authorization page.',
        params: InteractionParams,
        body: ConsentBody,
        response: { 200: InteractionResult, ...errorResponses(400, 403, 404, 413, 415, 429, 502) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const id = request.params.id;
      const { selections, tx_code, account, decision, credential_configuration_ids } = request.body;
      if ((await liveInteraction(deps, id)).kind === 'issuance') {
        if (selections !== undefined) throw unexpected('selections', 'a credential offer');
        const result = await decideIssuance(issuance, id, {
          decision,
          tx_code,
          account,
          credential_configuration_ids,
        });
        if (result.redirectTo) return { redirect_to: result.redirectTo };
        return resultView(result);
      }
      if (tx_code !== undefined) throw unexpected('tx_code', 'a presentation request');
      if (credential_configuration_ids !== undefined) {
        throw unexpected('credential_configuration_ids', 'a presentation request');
      }
      if (account !== undefined) throw unexpected('account', 'a presentation request');
      const result = await decideConsent(wallet, id, { decision, selections });
      return result.redirectTo ? { redirect_to: result.redirectTo } : { next: 'done' };
    },
  );

  app.post(
    '/interaction/:id/logout',
    {
      schema: {
        tags,
        summary: 'Confirm or refuse a sign-out that an app asked for (RP-Initiated Logout 1.0 §6)',
        params: InteractionParams,
        body: LogoutDecisionBody,
        response: { 200: InteractionResult, ...errorResponses(400, 403, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const returnTo = await decideLogout(deps, request.params.id);
      if (request.body.decision === 'stay') return { next: 'done' };
      await endSessionOfCookie(deps.db, request.headers.cookie);
      reply.header('set-cookie', expiredCookie(SESSION_COOKIE, secure));
      return returnTo ? { redirect_to: returnTo } : { next: 'done' };
    },
  );

  app.post(
    '/interaction/:id/sign-out',
    {
      schema: {
        tags,
        summary: 'Sign out in the middle of a presentation or an offer, to log in as someone else',
        description:
          'Ends the browser session (for every tenant) and forgets who logged in to this interaction; the page then asks to log in again.',
        params: InteractionParams,
        response: { 200: InteractionResult, ...errorResponses(403, 404, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      await forgetInteractionIdentity(deps, request.params.id);
      await endSessionOfCookie(deps.db, request.headers.cookie);
      reply.header('set-cookie', expiredCookie(SESSION_COOKIE, secure));
      return { next: 'consent' };
    },
  );
};
