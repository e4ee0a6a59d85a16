import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { type ErasureDeps, eraseAccount } from '../accounts/account-erasure.ts';
import { AccountExport } from '../accounts/account-schemas.ts';
import { CofferError, notFound } from '../errors.ts';
import { expiredCookie } from '../http/cookies.ts';
import { errorResponses } from '../http/openapi.ts';
import { refuseCrossSite } from '../http/same-origin.ts';
import { type InteractionDeps, startInteraction } from '../interaction/interaction-service.ts';
import {
  renderAccountDeletedPage,
  renderErrorPage,
  renderSignedOutPage,
  startPage,
} from '../interaction/page-chrome.ts';
import { endSessionOfCookie, SESSION_COOKIE, sessionOfCookie } from '../interaction/session-cookie.ts';
import { identityOfSession } from '../interaction/session-identity.ts';
import type { SessionRow } from '../interaction/session-repository.ts';
import { findAccountsOfIdentity, findUserById, type UserIdentity } from '../users/user-repository.ts';
import { exportWallet } from './wallet-export.ts';
import { logoOriginsOf, renderWalletPage } from './wallet-page.ts';
import { deleteWalletCredential, type WalletPageDeps, walletContent } from './wallet-service.ts';

export interface WalletRouteDeps {
  wallet: WalletPageDeps;
  /** Erasing one of the person's accounts ("Delete this account"). */
  erasure: ErasureDeps;
  interactions: InteractionDeps;
  /** Key of the page's anti-forgery token (derived from the master key). */
  pageTokenKey: Uint8Array;
}

interface Person {
  session: SessionRow;
  accounts: UserIdentity[];
}

const notLoggedIn = () =>
  new CofferError('unauthorized', 'You are not logged in to your wallet; open /wallet to log in.');

/**
 * The page's token: a MAC of the session, so it needs no storage, changes with every session
 * and is worthless once the session has ended.
 */
const pageTokenOf = (key: Uint8Array, session: SessionRow) =>
  createHmac('sha256', key).update(`wallet:${session.id_hash}`).digest('base64url');

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The person's own page and its two actions; all of it behind the browser session. */
export const walletRoutes: FastifyPluginAsyncTypebox<WalletRouteDeps> = async (app, deps) => {
  const { db } = deps.wallet;
  const tags = ['Wallet page'];
  const secure = deps.interactions.config.environment === 'production';

  /** Every account of the identity the session proved: the wallet belongs to the person. */
  async function personOf(request: FastifyRequest): Promise<Person | undefined> {
    const session = await sessionOfCookie(db, request.headers.cookie);
    if (!session) return undefined;
    const identity = await identityOfSession({ db }, session);
    const accounts = identity
      ? await findAccountsOfIdentity(db, identity)
      : [await findUserById(db, session.user_id)].filter((a) => a !== undefined);
    return accounts.length ? { session, accounts } : undefined;
  }

  async function actingPerson(request: FastifyRequest): Promise<Person> {
    refuseCrossSite(request, deps.interactions.config.publicUrl);
    const person = await personOf(request);
    if (!person) throw notLoggedIn();
    const token = request.headers['x-csrf-token'];
    if (
      typeof token !== 'string' ||
      !timingSafeEqual(digest(token), digest(pageTokenOf(deps.pageTokenKey, person.session)))
    ) {
      throw new CofferError(
        'forbidden',
        'This request did not come from your wallet page; reload it and try again.',
      );
    }
    return person;
  }

  app.get(
    '/wallet',
    {
      schema: {
        tags,
        summary: "The person's wallet page (HTML); with Accept: application/json its content",
        description:
          'Without a browser session: a redirect to the log-in. The newest 200 credentials of every account of the identity that logged in (issuer, type, validity, status, claims), how many they hold in all (credentialsHeld), and the history of presentations and arrivals.',
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const accept = request.headers.accept ?? '';
      const json = accept.includes('application/json') && !accept.includes('text/html');
      const person = await personOf(request);
      if (!person) {
        if (json) throw notLoggedIn();
        const interactionId = await startInteraction(deps.interactions, {
          kind: 'wallet',
          clientId: null,
          params: '{}',
        });
        return reply.redirect(`/interaction/${interactionId}`, 303);
      }
      const { view, accounts } = await walletContent(deps.wallet, person.accounts);
      if (json) return view;
      const cspNonce = startPage(reply, logoOriginsOf(view));
      return renderWalletPage({
        view,
        accounts,
        csrfToken: pageTokenOf(deps.pageTokenKey, person.session),
        cspNonce,
        host: new URL(deps.interactions.config.publicUrl).host,
      });
    },
  );

  app.delete(
    '/wallet/credentials/:key',
    {
      schema: {
        tags,
        summary: 'Delete a credential from the wallet page (the page sends its x-csrf-token)',
        description:
          'Removes the credential and its copies from every list and presentation and removes its blocks; the issuer is notified (credential_deleted) when it came by OpenID4VCI.',
        params: Type.Object({ key: Type.String({ pattern: '^[1-9][0-9]{0,9}$' }) }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const person = await actingPerson(request);
      await deleteWalletCredential(deps.wallet, person.accounts, Number(request.params.key));
      reply.header('cache-control', 'no-store').code(204);
    },
  );

  app.get(
    '/wallet/export',
    {
      schema: {
        tags,
        summary: 'Download everything Coffer holds about the person (a JSON file)',
        description:
          'Every account of the identity that logged in: its profile, its credentials as issued (and their other copies), its whole wallet history. Served as an attachment; without a browser session, 401.',
        response: { 200: AccountExport, ...errorResponses(401, 429) },
      },
    },
    async (request, reply) => {
      const person = await personOf(request);
      if (!person) throw notLoggedIn();
      const data = await exportWallet(deps.wallet, person.accounts);
      reply
        .header('cache-control', 'no-store')
        .header(
          'content-disposition',
          `attachment; filename="wallet-export-${data.exported_at.slice(0, 10)}.json"`,
        );
      return data;
    },
  );

  app.delete(
    '/wallet/accounts/:key',
    {
      schema: {
        tags,
        summary: "Erase one of the person's accounts (the page sends its x-csrf-token)",
        description:
          'As DELETE /v1/user/{user_id}, asked by the person: the account, its profile, credentials, history and sessions go. Answers where the page goes next: the wallet when another account keeps the session, else a page saying the account was deleted.',
        params: Type.Object({ key: Type.String({ pattern: '^[1-9][0-9]{0,9}$' }) }),
        response: {
          200: Type.Object({ redirect_to: Type.String() }),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const person = await actingPerson(request);
      const account = person.accounts.find((a) => a.user_id === Number(request.params.key));
      if (!account) throw notFound('The account');
      // The person deletes their own account from the wallet page.
      await eraseAccount(deps.erasure, account, {
        actor: `person:${account.user_id}`,
        requestId: request.id,
      });
      reply.header('cache-control', 'no-store');
      // The session belongs to one account: erasing that one ends it (its row went with the account).
      if (account.user_id !== person.session.user_id) return { redirect_to: '/wallet' };
      await endSessionOfCookie(db, request.headers.cookie);
      reply.header('set-cookie', expiredCookie(SESSION_COOKIE, secure));
      return { redirect_to: '/wallet/account-deleted' };
    },
  );

  app.get(
    '/wallet/account-deleted',
    { schema: { tags, summary: 'The page after erasing the account that was logged in' } },
    async (_r, reply) => {
      const cspNonce = startPage(reply);
      return renderAccountDeletedPage({ cspNonce, host: new URL(deps.interactions.config.publicUrl).host });
    },
  );

  app.post(
    '/wallet/sign-out',
    {
      schema: {
        tags,
        summary: 'Sign out: ends the browser session for every tenant',
        response: {
          200: Type.Object({ redirect_to: Type.String() }),
          ...errorResponses(401, 403, 429),
        },
      },
    },
    async (request, reply) => {
      await actingPerson(request);
      await endSessionOfCookie(db, request.headers.cookie);
      reply.header('cache-control', 'no-store').header('set-cookie', expiredCookie(SESSION_COOKIE, secure));
      return { redirect_to: '/wallet/signed-out' };
    },
  );

  app.get(
    '/wallet/signed-out',
    { schema: { tags, summary: 'The page after signing out' } },
    async (_r, reply) => {
      const cspNonce = startPage(reply);
      return renderSignedOutPage({ cspNonce, host: new URL(deps.interactions.config.publicUrl).host });
    },
  );

  // A wallet page whose session ended mid-way answers its script in JSON; a person gets a page.
  app.setErrorHandler(async (error, request, reply) => {
    const accept = request.headers.accept ?? '';
    if (request.method !== 'GET' || !(error instanceof CofferError) || accept.includes('application/json'))
      throw error;
    const cspNonce = startPage(reply.code(error.status));
    return renderErrorPage({ title: 'Your wallet cannot be shown', message: error.message, cspNonce });
  });
};
