import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildApp } from '../../src/app.ts';
import { setClientSettings } from '../../src/clients/client-admin.ts';
import { readConfig } from '../../src/config/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  authorizationRequest,
  interactionView,
  logInWithWallet,
  postInteraction,
  type RelyingParty,
  registerRelyingParty,
} from './flow-helpers.ts';

const AFTER_LOGOUT = 'https://rp.example/signed-out';

/** A person logged in at the relying party: the browser's session cookie and openid-client's tokens. */
async function signedIn(server: TestServer, rp: RelyingParty) {
  const login = await logInWithWallet(server, rp, privateKeyToAccount(generatePrivateKey()));
  const tokens = await oidc.authorizationCodeGrant(rp.config, login.redirectTo, {
    pkceCodeVerifier: login.verifier,
    expectedNonce: login.nonce,
    expectedState: login.state,
  });
  return { cookie: login.cookie.split(';')[0]!, tokens, sub: tokens.claims()!.sub };
}

/** What prompt=none answers for this browser: a code while the session lives, else login_required. */
async function silentLogin(rp: RelyingParty, cookie: string) {
  const { url } = await authorizationRequest(rp, { prompt: 'none' });
  const response = await fetch(url, { redirect: 'manual', headers: { cookie } });
  const location = new URL(response.headers.get('location')!);
  return location.searchParams.get('error') ?? (location.searchParams.get('code') ? 'code' : 'nothing');
}

const get = (server: TestServer, path: string, token: string) =>
  fetch(server.url + path, { headers: { authorization: `Bearer ${token}` } });

for (const kind of DATABASE_KINDS) {
  describe(`Sign-out and revocation with openid-client, on ${kind}`, () => {
    let server: TestServer;
    let rp: RelyingParty;
    let other: RelyingParty;
    before(async () => {
      server = await startTestServer(kind);
      rp = await registerRelyingParty(server);
      other = await registerRelyingParty(server);
      await setClientSettings(server.database.db, createFieldCipher(server.masterKey), rp.clientId, {
        postLogoutRedirectUris: [AFTER_LOGOUT],
      });
    });
    after(() => server.close());

    test('discovery names the revocation and end-session endpoints', () => {
      const metadata = rp.config.serverMetadata();
      assert.equal(metadata.revocation_endpoint, `${server.url}/v2/openidc/revoke`);
      assert.equal(metadata.end_session_endpoint, `${server.url}/v2/openidc/logout`);
      assert.deepEqual(metadata.revocation_endpoint_auth_methods_supported, [
        'client_secret_basic',
        'client_secret_post',
        'none',
      ]);
    });

    test('a revoked access token is refused at once by userinfo and the credential list', async () => {
      const { tokens, sub } = await signedIn(server, rp);
      assert.equal((await oidc.fetchUserInfo(rp.config, tokens.access_token, sub)).sub, sub);
      assert.equal((await get(server, '/v1/openidc/credentials', tokens.access_token)).status, 200);

      await oidc.tokenRevocation(rp.config, tokens.access_token, { token_type_hint: 'access_token' });

      const userinfo = await get(server, '/v2/openidc/user', tokens.access_token);
      assert.equal(userinfo.status, 401);
      assert.match(userinfo.headers.get('www-authenticate') ?? '', /invalid_token/);
      assert.equal(((await userinfo.json()) as { error: string }).error, 'invalid_token');
      assert.equal((await get(server, '/v1/openidc/credentials', tokens.access_token)).status, 401);
      // Revoking twice is no error (RFC 7009 §2.2).
      await oidc.tokenRevocation(rp.config, tokens.access_token);
    });

    test("another client's revocation leaves the token working, and answers 200 as for any token", async () => {
      const { tokens, sub } = await signedIn(server, rp);
      await oidc.tokenRevocation(other.config, tokens.access_token);
      assert.equal((await oidc.fetchUserInfo(rp.config, tokens.access_token, sub)).sub, sub);
      await oidc.tokenRevocation(rp.config, 'not-a-token-at-all');
    });

    test('the revocation endpoint authenticates the client and validates its body', async () => {
      const { tokens, sub } = await signedIn(server, rp);
      const revoke = (body: string, headers: Record<string, string> = {}) =>
        fetch(`${server.url}/v2/openidc/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
          body,
        });
      const anonymous = await revoke(`token=${tokens.access_token}`);
      assert.equal(anonymous.status, 401);
      assert.equal(((await anonymous.json()) as { error: string }).error, 'invalid_client');
      const wrongSecret = await revoke(`token=${tokens.access_token}`, {
        authorization: `Basic ${Buffer.from(`${rp.clientId}:wrong`).toString('base64')}`,
      });
      assert.equal(wrongSecret.status, 401);
      assert.match(wrongSecret.headers.get('www-authenticate') ?? '', /^Basic/);
      const noToken = await revoke(`client_id=${rp.clientId}&client_secret=${rp.clientSecret}`);
      assert.equal(noToken.status, 400);
      assert.equal(((await noToken.json()) as { error: string }).error, 'invalid_request');
      const both = await revoke(`token=x&client_secret=${rp.clientSecret}`, {
        authorization: `Basic ${Buffer.from(`${rp.clientId}:${rp.clientSecret}`).toString('base64')}`,
      });
      assert.equal(both.status, 400);
      // None of that revoked anything.
      assert.equal((await oidc.fetchUserInfo(rp.config, tokens.access_token, sub)).sub, sub);
      // client_secret_post works as well as Basic.
      const posted = await revoke(
        `token=${tokens.access_token}&client_id=${rp.clientId}&client_secret=${encodeURIComponent(rp.clientSecret)}`,
      );
      assert.equal(posted.status, 200);
      assert.equal((await get(server, '/v2/openidc/user', tokens.access_token)).status, 401);
    });

    test('RP-initiated logout with the id_token_hint and a registered address ends the session and returns state', async () => {
      const { cookie, tokens } = await signedIn(server, rp);
      assert.equal(await silentLogin(rp, cookie), 'code');
      const url = oidc.buildEndSessionUrl(rp.config, {
        id_token_hint: tokens.id_token!,
        post_logout_redirect_uri: AFTER_LOGOUT,
        state: 'bye-123',
      });
      const response = await fetch(url, { redirect: 'manual', headers: { cookie } });
      assert.equal(response.status, 303);
      const location = new URL(response.headers.get('location')!);
      assert.equal(location.origin + location.pathname, AFTER_LOGOUT);
      assert.equal(location.searchParams.get('state'), 'bye-123');
      assert.match(response.headers.get('set-cookie') ?? '', /coffer_session=; Path=\/; Max-Age=0/);
      // The old cookie is refused from now on: prompt=none needs a log-in.
      assert.equal(await silentLogin(rp, cookie), 'login_required');
    });

    test('an unregistered post_logout_redirect_uri is refused on a page and nothing ends', async () => {
      const { cookie, tokens } = await signedIn(server, rp);
      for (const uri of ['https://evil.example/after', `${AFTER_LOGOUT}/extra`]) {
        const url = oidc.buildEndSessionUrl(rp.config, {
          id_token_hint: tokens.id_token!,
          post_logout_redirect_uri: uri,
        });
        const response = await fetch(url, { redirect: 'manual', headers: { cookie } });
        assert.equal(response.status, 400);
        assert.equal(response.headers.get('location'), null);
        assert.match(await response.text(), /not a post-logout address registered/);
      }
      // The other client has no such address registered either.
      const foreign = oidc.buildEndSessionUrl(other.config, { post_logout_redirect_uri: AFTER_LOGOUT });
      assert.equal((await fetch(foreign, { redirect: 'manual', headers: { cookie } })).status, 400);
      assert.equal(await silentLogin(rp, cookie), 'code');
    });

    test('without a hint the person confirms; "stay" keeps the session, "sign out" ends it', async () => {
      const { cookie } = await signedIn(server, rp);
      const url = oidc.buildEndSessionUrl(rp.config, { post_logout_redirect_uri: AFTER_LOGOUT, state: 's1' });
      const first = await fetch(url, { redirect: 'manual', headers: { cookie } });
      assert.equal(first.status, 303);
      const interactionPath = first.headers.get('location')!;
      assert.match(interactionPath, /^\/interaction\//);
      const page = await fetch(server.url + interactionPath, { headers: { cookie } });
      assert.match(await page.text(), /Sign out of .*\?[\s\S]*Relying Party asks you to sign out/);

      const stay = await postInteraction(server, interactionPath, 'logout', { decision: 'stay' });
      assert.equal(stay.status, 200);
      assert.deepEqual(stay.body, { next: 'done' });
      assert.equal(await silentLogin(rp, cookie), 'code');
      // Answered once.
      const again = await postInteraction(server, interactionPath, 'logout', { decision: 'sign_out' });
      assert.equal(again.status, 404);

      const second = await fetch(url, { redirect: 'manual', headers: { cookie } });
      const path = second.headers.get('location')!;
      const confirmed = await postInteraction(server, path, 'logout', { decision: 'sign_out' }, { cookie });
      assert.equal(confirmed.status, 200);
      assert.equal(confirmed.body.redirect_to, `${AFTER_LOGOUT}?state=s1`);
      assert.equal(await silentLogin(rp, cookie), 'login_required');
    });

    test("a hint naming someone else than the browser's person asks before signing out", async () => {
      const alice = await signedIn(server, rp);
      const bob = await signedIn(server, rp);
      const url = oidc.buildEndSessionUrl(rp.config, { id_token_hint: bob.tokens.id_token! });
      const response = await fetch(url, { redirect: 'manual', headers: { cookie: alice.cookie } });
      assert.equal(response.status, 303);
      assert.match(response.headers.get('location')!, /^\/interaction\//);
      assert.equal(await silentLogin(rp, alice.cookie), 'code');
    });

    test('end-session refusals: a forged hint, a client that does not match the hint, an unknown client', async () => {
      const { tokens } = await signedIn(server, rp);
      const [h, p] = tokens.id_token!.split('.');
      const cases = [
        `id_token_hint=${h}.${p}.${'A'.repeat(86)}`,
        `id_token_hint=${tokens.id_token}&client_id=${other.clientId}`,
        'client_id=999999',
        `post_logout_redirect_uri=${encodeURIComponent(AFTER_LOGOUT)}`,
        `id_token_hint=${tokens.access_token}`,
      ];
      for (const query of cases) {
        const response = await fetch(`${server.url}/v2/openidc/logout?${query}`, { redirect: 'manual' });
        assert.equal(response.status, 400, query);
        assert.match(response.headers.get('content-type') ?? '', /text\/html/);
      }
      // The form-post variant takes the same parameters.
      const posted = await fetch(`${server.url}/v2/openidc/logout`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `id_token_hint=${tokens.id_token}&post_logout_redirect_uri=${encodeURIComponent(AFTER_LOGOUT)}`,
      });
      assert.equal(posted.status, 303);
      assert.equal(posted.headers.get('location'), AFTER_LOGOUT);
    });

    test('without a session, logout just returns to the registered address', async () => {
      const { tokens } = await signedIn(server, rp);
      const url = oidc.buildEndSessionUrl(rp.config, {
        id_token_hint: tokens.id_token!,
        post_logout_redirect_uri: AFTER_LOGOUT,
      });
      const response = await fetch(url, { redirect: 'manual' });
      assert.equal(response.status, 303);
      assert.equal(response.headers.get('location'), AFTER_LOGOUT);
      const plain = await fetch(`${server.url}/v2/openidc/logout`, { redirect: 'manual' });
      assert.equal(plain.status, 200);
      assert.match(await plain.text(), /You are signed out/);
    });

    test('a log-in interaction has no sign-out confirmation, and a sign-out interaction no log-in', async () => {
      const { url } = await authorizationRequest(rp);
      const started = await fetch(url, { redirect: 'manual' });
      const loginPath = started.headers.get('location')!;
      assert.equal(
        (await postInteraction(server, loginPath, 'logout', { decision: 'sign_out' })).status,
        404,
      );
      const { cookie } = await signedIn(server, rp);
      const logout = await fetch(oidc.buildEndSessionUrl(rp.config, {}), {
        redirect: 'manual',
        headers: { cookie },
      });
      const logoutPath = logout.headers.get('location')!;
      assert.equal((await interactionView(server, logoutPath)).body.kind, 'logout');
      const sent = await postInteraction(server, logoutPath, 'login/email', { email: 'a@b.example' });
      assert.equal(sent.status, 404);
      const bad = await postInteraction(server, logoutPath, 'logout', { decision: 'maybe' });
      assert.equal(bad.status, 400);
    });
  });
}

describe('revocation and sign-out across two instances on one PostgreSQL', {
  skip: !DATABASE_KINDS.includes('postgres'),
}, () => {
  test('a token revoked and a session ended at one instance are refused at the other at once', async () => {
    const first = await startTestServer('postgres');
    // A second instance: its own process state, the same database and master key.
    const config = readConfig({ ...first.env, PORT: '0' });
    const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: first.testDatabase.dataDir });
    const second = await buildApp({ config, database, masterKey: first.masterKey });
    await second.ready();
    try {
      const rp = await registerRelyingParty(first);
      const { cookie, tokens } = await signedIn(first, rp);
      const userinfoAtSecond = async () =>
        (
          await second.inject({
            method: 'GET',
            url: '/v2/openidc/user',
            headers: { authorization: `Bearer ${tokens.access_token}` },
          })
        ).statusCode;
      assert.equal(await userinfoAtSecond(), 200);
      await oidc.tokenRevocation(rp.config, tokens.access_token);
      assert.equal(await userinfoAtSecond(), 401);

      const walletAtSecond = async () =>
        (
          await second.inject({
            method: 'GET',
            url: '/wallet',
            headers: { cookie, accept: 'application/json' },
          })
        ).statusCode;
      assert.equal(await walletAtSecond(), 200);
      const logout = await fetch(oidc.buildEndSessionUrl(rp.config, { id_token_hint: tokens.id_token! }), {
        redirect: 'manual',
        headers: { cookie },
      });
      assert.equal(logout.status, 200);
      assert.equal(await walletAtSecond(), 401);
    } finally {
      await second.close();
      await database.close();
      await first.close();
    }
  });
});
