import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  authorizationRequest,
  logInWithWallet,
  REDIRECT_URI,
  type RelyingParty,
  registerRelyingParty,
} from './flow-helpers.ts';

const person = () => privateKeyToAccount(generatePrivateKey());

for (const kind of DATABASE_KINDS) {
  describe(`Pushed authorization requests (RFC 9126) with openid-client, on ${kind}`, () => {
    let server: TestServer;
    let rp: RelyingParty;
    before(async () => {
      server = await startTestServer(kind);
      rp = await registerRelyingParty(server);
    });
    after(() => server.close());

    const exchange = (
      client: RelyingParty,
      login: Awaited<ReturnType<typeof logInWithWallet>>,
      dpop?: oidc.DPoPHandle,
    ) =>
      oidc.authorizationCodeGrant(
        client.config,
        login.redirectTo,
        { pkceCodeVerifier: login.verifier, expectedNonce: login.nonce, expectedState: login.state },
        undefined,
        dpop ? { DPoP: dpop } : {},
      );

    test('discovery names the endpoint', () => {
      const metadata = rp.config.serverMetadata();
      assert.equal(metadata.pushed_authorization_request_endpoint, `${server.url}/v2/openidc/par`);
      assert.equal(metadata.require_pushed_authorization_requests, false);
    });

    test('/openapi.json describes the endpoint and the refresh grant, form bodies included', async () => {
      const paths = (await server.request('GET', '/openapi.json')).body.paths;
      const par = paths['/v2/openidc/par'].post;
      assert.ok(par.responses['201']);
      assert.ok(par.requestBody.content['application/x-www-form-urlencoded']);
      const token = paths['/v2/openidc/token'].post.requestBody.content['application/x-www-form-urlencoded'];
      assert.ok(token.schema.properties.refresh_token);
    });

    test('a pushed request logs the person in like a plain one', async () => {
      const login = await logInWithWallet(server, rp, person(), {}, { par: true });
      const tokens = await exchange(rp, login);
      assert.ok(tokens.claims()!.sub);
    });

    test('a request_uri is single use, expires, and belongs to its client', async () => {
      const { url } = await authorizationRequest(rp, {}, { par: true });
      assert.equal(
        new URL(url).searchParams.size,
        2,
        'only client_id and request_uri travel through the browser',
      );
      const first = await fetch(url, { redirect: 'manual' });
      assert.equal(first.status, 303);
      const again = await fetch(url, { redirect: 'manual' });
      assert.equal(again.status, 400);
      assert.match(await again.text(), /request_uri is not valid/);

      const other = await registerRelyingParty(server);
      const pushed = await authorizationRequest(rp, {}, { par: true });
      const foreign = new URL(pushed.url);
      foreign.searchParams.set('client_id', String(other.clientId));
      assert.equal((await fetch(foreign, { redirect: 'manual' })).status, 400);
      // The failed attempt by another client spent nothing.
      assert.equal((await fetch(pushed.url, { redirect: 'manual' })).status, 303);

      const late = await authorizationRequest(rp, {}, { par: true });
      await server.database.db.updateTable('pushed_requests').set({ expires_at: 1 }).execute();
      assert.equal((await fetch(late.url, { redirect: 'manual' })).status, 400);
    });

    test('a client registered --require-par may not send a plain request', async () => {
      const strict = await registerRelyingParty(server, undefined, { requirePar: true });
      const { url } = await authorizationRequest(strict);
      const plain = await fetch(url, { redirect: 'manual' });
      assert.equal(plain.status, 303);
      const back = new URL(plain.headers.get('location')!);
      assert.equal(back.origin + back.pathname, REDIRECT_URI);
      assert.equal(back.searchParams.get('error'), 'invalid_request');
      const login = await logInWithWallet(server, strict, person(), {}, { par: true });
      assert.ok((await exchange(strict, login)).access_token);
    });

    test('a DPoP proof at PAR binds the code to its key', async () => {
      const handle = oidc.getDPoPHandle(rp.config, await oidc.randomDPoPKeyPair('ES256'));
      const login = await logInWithWallet(server, rp, person(), {}, { par: true, dpop: handle });
      const stranger = oidc.getDPoPHandle(rp.config, await oidc.randomDPoPKeyPair('ES256'));
      await assert.rejects(exchange(rp, login, stranger), (error: oidc.ResponseBodyError) => {
        assert.equal(error.error, 'invalid_grant');
        return true;
      });
      const again = await logInWithWallet(server, rp, person(), {}, { par: true, dpop: handle });
      const tokens = await exchange(rp, again, handle);
      assert.equal(tokens.token_type.toLowerCase(), 'dpop');
    });

    test('bad pushes are refused with the error body', async () => {
      const push = (params: Record<string, string>, secret = rp.clientSecret) =>
        server.request('POST', '/v2/openidc/par', {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            client_id: String(rp.clientId),
            client_secret: secret,
            response_type: 'code',
            redirect_uri: REDIRECT_URI,
            scope: 'openid',
            code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
            code_challenge_method: 'S256',
            ...params,
          }).toString(),
        });
      const ok = await push({});
      assert.equal(ok.status, 201);
      assert.match((ok.body as { request_uri: string }).request_uri, /^urn:ietf:params:oauth:request_uri:/);
      assert.equal((ok.body as { expires_in: number }).expires_in, 60);
      const cases: Array<[Record<string, string>, string, number]> = [
        [{ scope: 'profile' }, 'invalid_scope', 400],
        [{ redirect_uri: 'https://evil.example/cb' }, 'invalid_request', 400],
        [{ response_type: 'token' }, 'unsupported_response_type', 400],
        [{ request_uri: 'urn:ietf:params:oauth:request_uri:x' }, 'invalid_request', 400],
        [{ request: 'eyJ.e30.x' }, 'request_not_supported', 400],
        [{ dpop_jkt: 'short' }, 'invalid_request', 400],
      ];
      for (const [params, error, status] of cases) {
        const answer = await push(params);
        assert.equal(answer.status, status, JSON.stringify(params));
        assert.equal((answer.body as { error: string }).error, error, JSON.stringify(params));
      }
      const wrongSecret = await push({}, 'cfr_cs_wrong');
      assert.equal(wrongSecret.status, 401);
      assert.equal((wrongSecret.body as { error: string }).error, 'invalid_client');
      const json = await server.request('POST', '/v2/openidc/par', {
        body: { client_id: String(rp.clientId) },
      });
      assert.equal(json.status, 401);
    });
  });
}
