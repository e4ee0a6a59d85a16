import assert from 'node:assert/strict';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { TestServer } from '../helpers/server.ts';
import { interactionView, postInteraction, signSiwe } from '../oidc/flow-helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

/** Opens /wallet without a session: Coffer sends the browser to a log-in interaction. */
export async function walletLogin(server: TestServer): Promise<string> {
  const response = await fetch(`${server.url}/wallet`, { redirect: 'manual' });
  assert.equal(response.status, 303);
  const path = response.headers.get('location')!;
  assert.match(path, /^\/interaction\/[A-Za-z0-9_-]+$/);
  return path;
}

/** Logs in to the wallet page with Sign-In with Ethereum; returns the session cookie. */
export async function openWallet(server: TestServer, account: PrivateKeyAccount): Promise<string> {
  const path = await walletLogin(server);
  const view = await interactionView(server, path);
  assert.equal(view.body.kind, 'wallet');
  const login = await postInteraction(server, path, 'login/wallet', await signSiwe(account, view.body.siwe));
  assert.equal(login.status, 200, JSON.stringify(login.body));
  assert.equal(login.body.redirect_to, '/wallet');
  return login.cookie!.split(';')[0]!;
}

/** The wallet's content as JSON (what the page renders). */
export async function walletJson(server: TestServer, cookie: string): Promise<Json> {
  const response = await fetch(`${server.url}/wallet`, { headers: { cookie, accept: 'application/json' } });
  assert.equal(response.status, 200);
  return response.json();
}

/** The page's anti-forgery token, read from the page as its script does. */
export async function pageToken(server: TestServer, cookie: string): Promise<string> {
  const html = await (await fetch(`${server.url}/wallet`, { headers: { cookie } })).text();
  const data = html.match(/<script type="application\/json" id="wallet-data"[^>]*>([^<]*)<\/script>/);
  assert.ok(data, 'the page carries its data block');
  return JSON.parse(data[1]!).csrfToken;
}

/** What the page's script sends to delete a credential. */
export const deleteFromPage = (
  server: TestServer,
  cookie: string,
  key: string | number,
  token: string | undefined,
  extra: Record<string, string> = {},
) =>
  fetch(`${server.url}/wallet/credentials/${key}`, {
    method: 'DELETE',
    headers: { cookie, accept: 'application/json', ...(token ? { 'x-csrf-token': token } : {}), ...extra },
  });
