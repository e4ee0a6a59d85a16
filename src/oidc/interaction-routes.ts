import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CofferError } from '../errors.ts';
import { sessionCookie } from '../http/cookies.ts';
import { errorResponses } from '../http/openapi.ts';
import {
  describeInteraction,
  type FinishedLogin,
  type InteractionDeps,
  logInWithSiwe,
  sendEmailCode,
  verifyEmailCode,
} from './interaction-service.ts';
import { pageCsp, renderErrorPage, renderLoginPage } from './login-page.ts';
import { SESSION_COOKIE } from './oidc-routes.ts';
import {
  EmailLoginBody,
  EmailVerifyBody,
  InteractionParams,
  InteractionResult,
  WalletLoginBody,
} from './oidc-schemas.ts';

/**
 * Cross-site request forgery: the POSTs take JSON only (a cross-site form cannot send it
 * without a CORS preflight, which Coffer never grants), and a browser's Origin or
 * Sec-Fetch-Site must name this service.
 */
function refuseCrossSite(request: FastifyRequest, publicUrl: string): void {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== new URL(publicUrl).origin) {
    throw new CofferError('forbidden', 'Cross-site requests to the log-in are not allowed.');
  }
  if (request.headers['sec-fetch-site'] === 'cross-site') {
    throw new CofferError('forbidden', 'Cross-site requests to the log-in are not allowed.');
  }
}

function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

export const interactionRoutes: FastifyPluginAsyncTypebox<InteractionDeps> = async (app, deps) => {
  const tags = ['Log-in interaction'];
  const secure = deps.config.environment === 'production';
  const finish = (reply: FastifyReply, login: FinishedLogin) => {
    reply.header(
      'set-cookie',
      sessionCookie(SESSION_COOKIE, login.sessionId, login.sessionMaxAgeSeconds, secure),
    );
    reply.header('cache-control', 'no-store');
    return { redirect_to: login.redirectTo };
  };

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
      if (wantsJson(request)) return describeInteraction(deps, request.params.id);
      const cspNonce = randomBytes(16).toString('base64');
      reply.type('text/html; charset=utf-8').header('content-security-policy', pageCsp(cspNonce));
      try {
        const view = await describeInteraction(deps, request.params.id);
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
        return renderErrorPage({ title: 'This log-in cannot continue', message: error.message, cspNonce });
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
      refuseCrossSite(request, deps.config.publicUrl);
      const body = request.body as { message: string; signature: string };
      return finish(reply, await logInWithSiwe(deps, request.params.id, body, request.ip));
    },
  );

  app.post(
    '/interaction/:id/login/email',
    { schema: postSchema('Send a 6-digit one-time code to an e-mail address', EmailLoginBody) },
    async (request, reply) => {
      refuseCrossSite(request, deps.config.publicUrl);
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
      refuseCrossSite(request, deps.config.publicUrl);
      return finish(
        reply,
        await verifyEmailCode(deps, request.params.id, request.body as { code: string }, request.ip),
      );
    },
  );
};
