import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as oidc from 'openid-client';
import { privateKeyToAccount } from 'viem/accounts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  codeFromOutbox,
  interactionView,
  logInWithWallet,
  postInteraction,
  REDIRECT_URI,
  type RelyingParty,
  registerRelyingParty,
  startLogin,
} from './flow-helpers.ts';

const alice = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

for (const kind of DATABASE_KINDS) {
  describe(`OpenID Connect with openid-client as the relying party, on ${kind}`, () => {
    let server: TestServer;
    let rp: RelyingParty;
    before(async () => {
      server = await startTestServer(kind);
      rp = await registerRelyingParty(server);
    });
    after(() => server.close());

    test('wallet log-in: discovery, PKCE, Sign-In with Ethereum, code grant, identity token, userinfo', async () => {
      const login = await logInWithWallet(server, rp, alice);
      assert.equal(login.redirectTo.origin + login.redirectTo.pathname, REDIRECT_URI);
      assert.equal(login.redirectTo.searchParams.get('iss'), server.url);
      assert.match(login.cookie, /coffer_session=.+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax/);

      const tokens = await oidc.authorizationCodeGrant(rp.config, login.redirectTo, {
        pkceCodeVerifier: login.verifier,
        expectedNonce: login.nonce,
        expectedState: login.state,
      });
      assert.equal(tokens.token_type, 'bearer');
      const claims = tokens.claims()!;
      assert.equal(claims.iss, server.url);
      assert.equal(claims.aud, String(rp.clientId));
      assert.equal(claims['eth_address'], alice.address);
      assert.equal(claims['login_type'], 'wallet');
      assert.match(String(claims['did_wallet_address']), /^did:key:z6Mk/);
      assert.equal(typeof claims['at_hash'], 'string');

      const header = decodeProtectedHeader(tokens.access_token);
      assert.equal(header.typ, 'at+jwt');
      assert.equal(header.alg, 'ES256');
      const access = decodeJwt(tokens.access_token);
      assert.equal(access.aud, String(rp.clientId));
      assert.equal(access['client_id'], String(rp.clientId));
      assert.equal(access.iss, server.url);
      assert.equal(access.sub, claims.sub);
      assert.ok(access.jti && access['auth_time']);

      const userinfo = await oidc.fetchUserInfo(rp.config, tokens.access_token, claims.sub);
      assert.equal(userinfo.sub, claims.sub);
      assert.equal(userinfo['eth_address'], alice.address);
      assert.equal(userinfo['did_wallet_address'], claims['did_wallet_address']);

      // The same wallet logs in to the same account next time.
      const again = await logInWithWallet(server, rp, alice);
      const second = await oidc.authorizationCodeGrant(rp.config, again.redirectTo, {
        pkceCodeVerifier: again.verifier,
        expectedNonce: again.nonce,
        expectedState: again.state,
      });
      assert.equal(second.claims()!.sub, claims.sub);
    });

    test('e-mail log-in: the code from the outbox signs the person up; userinfo shows the verified e-mail', async () => {
      const email = `person.${kind}@example.org`;
      const started = await startLogin(server, rp);
      const sent = await postInteraction(server, started.interactionPath, 'login/email', { email });
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
      const code = await codeFromOutbox(server, email);
      const verified = await postInteraction(server, started.interactionPath, 'login/email/verify', { code });
      assert.equal(verified.status, 200, JSON.stringify(verified.body));
      const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(verified.body.redirect_to), {
        pkceCodeVerifier: started.verifier,
        expectedNonce: started.nonce,
        expectedState: started.state,
      });
      const claims = tokens.claims()!;
      assert.equal(claims['login_type'], 'email');
      assert.equal(claims['eth_address'], null);
      const userinfo = await oidc.fetchUserInfo(rp.config, tokens.access_token, claims.sub);
      assert.equal(userinfo.email, email);
      assert.equal(userinfo.email_verified, true);
    });

    test('a live session skips the log-in (single sign-on); prompt=login asks again', async () => {
      const first = await logInWithWallet(server, rp, alice);
      const cookie = first.cookie.split(';')[0]!;
      const url = oidc.buildAuthorizationUrl(rp.config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
        state: 's1',
      });
      const sso = await fetch(url, { redirect: 'manual', headers: { cookie } });
      assert.equal(sso.status, 303);
      const location = new URL(sso.headers.get('location')!);
      assert.equal(location.origin + location.pathname, REDIRECT_URI);
      assert.ok(location.searchParams.get('code'));
      assert.equal(location.searchParams.get('state'), 's1');
      url.searchParams.set('prompt', 'login');
      const forced = await fetch(url, { redirect: 'manual', headers: { cookie } });
      assert.match(forced.headers.get('location')!, /^\/interaction\//);
      url.searchParams.set('prompt', 'none');
      const none = await fetch(url, { redirect: 'manual' });
      assert.equal(new URL(none.headers.get('location')!).searchParams.get('error'), 'login_required');
    });

    test('the interaction page renders for browsers with the client name and a strict CSP', async () => {
      const started = await startLogin(server, rp);
      const page = await fetch(server.url + started.interactionPath, { headers: { accept: 'text/html' } });
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type')!, /text\/html/);
      assert.match(page.headers.get('content-security-policy')!, /script-src 'nonce-/);
      const html = await page.text();
      assert.match(html, /Log in to Relying Party/);
      const view = await interactionView(server, started.interactionPath);
      assert.equal(view.body.kind, 'login');
      assert.deepEqual(view.body.methods, ['wallet', 'email']);
      assert.equal(view.body.siwe.domain, new URL(server.url).host);
    });
  });
}
