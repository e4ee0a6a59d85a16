import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CofferError } from '../errors.ts';
import { expiredCookie, sessionCookie } from '../http/cookies.ts';
import { errorResponses } from '../http/openapi.ts';
import { refuseCrossSite } from '../http/same-origin.ts';
import { EXTRA_LOGIN_METHODS, type FinishedLogin, type InteractionAnswer } from './interaction-kinds.ts';
import {
  ConsentBody,
  EmailLoginBody,
  EmailVerifyBody,
  ExtraLoginChecked,
  ExtraLoginStarted,
  InteractionParams,
  InteractionResult,
  LogoutDecisionBody,
  WalletLoginBody,
} from './interaction-schemas.ts';
import {
  checkPageToken,
  describeInteraction,
  describeInteractionJson,
  forgetInteractionIdentity,
  gone,
  type InteractionDeps,
  kindOf,
  liveInteraction,
} from './interaction-service.ts';
import {
  checkExtraLogin,
  logInWithSiwe,
  sendEmailCode,
  startExtraLogin,
  verifyEmailCode,
} from './login-methods.ts';
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

/**
 * The interaction endpoints of every kind: the page (or its JSON view), the log-in steps, the
 * person's answer and signing out mid-way. What a kind shows and does is the kind's
 * (interaction-kinds.ts); this file only carries requests to it.
 */
export const interactionRoutes: FastifyPluginAsyncTypebox<InteractionDeps> = async (app, deps) => {
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
        sessionCookie(
          login.cookie?.name ?? SESSION_COOKIE,
          login.sessionId,
          login.sessionMaxAgeSeconds,
          secure,
          login.cookie?.sameSite,
        ),
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
      if (wantsJson(request)) return describeInteractionJson(deps, id);
      try {
        const view = await describeInteraction(deps, id);
        return await kindOf(deps, await liveInteraction(deps, id)).render(view, reply);
      } catch (error) {
        if (!(error instanceof CofferError)) throw error;
        const cspNonce = startPage(reply);
        reply.code(error.status);
        return renderErrorPage({ title: 'This page cannot continue', message: error.message, cspNonce });
      }
    },
  );

  /** The person's answer goes to the interaction's kind, if that kind answers at this path. */
  const answer = async (id: string, at: 'consent' | 'logout', body: Record<string, unknown>) => {
    const row = await liveInteraction(deps, id);
    const kind = kindOf(deps, row);
    if (kind.answer?.at !== at) throw gone();
    return kind.answer.decide(row, body);
  };
  /** An answer that ends the browser's session (a confirmed sign-out) expires its cookie too. */
  const answered = async (request: FastifyRequest, reply: FastifyReply, result: InteractionAnswer) => {
    const { endSession, ...body } = result;
    if (endSession) {
      await endSessionOfCookie(deps.db, request.headers.cookie);
      reply.header('set-cookie', expiredCookie(SESSION_COOKIE, secure));
    }
    return body;
  };

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

  // Methods provided from above the core (a credential from a wallet): a start and a check each.
  for (const name of EXTRA_LOGIN_METHODS) {
    app.post(
      `/interaction/:id/login/${name}`,
      {
        schema: {
          tags,
          summary: `Start logging in with a ${name} (offered when the interaction's methods list it)`,
          description:
            'For credential: makes (or answers again) a presentation request for the verifier of the client, with the DCQL query of its --wallet-login; the page shows its QR code and an "Open your wallet" link, then polls …/check.',
          params: InteractionParams,
          response: { 200: ExtraLoginStarted, ...errorResponses(403, 404, 429) },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        return startExtraLogin(deps, name, request.params.id, request.ip);
      },
    );
    app.post(
      `/interaction/:id/login/${name}/check`,
      {
        schema: {
          tags,
          summary: `Where a ${name} log-in stands: 202 while waiting, else redirect_to like the other log-ins`,
          description:
            'For credential: 202 {status} until a verified presentation comes (a declined or rejected answer, which anyone who saw the QR code can send, keeps it waiting); then the verified claim named by account_claim logs the person in (signed up in the tenant when unknown) with the session cookie and redirect_to. An expired request is 400 with a sentence; starting again makes a new request.',
          params: InteractionParams,
          response: { 200: ExtraLoginChecked, 202: ExtraLoginChecked, ...errorResponses(400, 403, 404, 429) },
        },
      },
      async (request, reply) => {
        const checked = await checkExtraLogin(deps, name, request.params.id);
        if ('pending' in checked) {
          reply.code(202).header('cache-control', 'no-store');
          return { status: checked.pending };
        }
        return finish(reply, checked);
      },
    );
  }

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
      return answered(request, reply, await answer(request.params.id, 'consent', request.body));
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
      return answered(request, reply, await answer(request.params.id, 'logout', request.body));
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
