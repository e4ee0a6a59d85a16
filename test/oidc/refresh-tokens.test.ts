import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildApp } from '../../src/app.ts';
import { rotateClientSecret, setClientSettings } from '../../src/clients/client-admin.ts';
import { readConfig } from '../../src/config/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { logInWithWallet, type RelyingParty, registerRelyingParty } from './flow-helpers.ts';

const REFRESH_TOKEN_TTL = 7 * 86400;

/** A person logged in at an app that asked for offline access; openid-client's tokens. */
async function signedIn(server: TestServer, rp: RelyingParty, scope = 'openid email offline_access') {
  const login = await logInWithWallet(server, rp, privateKeyToAccount(generatePrivateKey()), { scope });
  return oidc.authorizationCodeGrant(rp.config, login.redirectTo, {
    pkceCodeVerifier: login.verifier,
    expectedNonce: login.nonce,
    expectedState: login.state,
  });
}

/** What openid-client's refresh answers: the tokens, or the OAuth error code. */
async function refresh(rp: RelyingParty, token: string, parameters: Record<string, string> = {}) {
  try {
    return { tokens: await oidc.refreshTokenGrant(rp.config, token, parameters) };
  } catch (error) {
    if (error instanceof oidc.ResponseBodyError) return { error: error.error };
    throw error;
  }
}

const userinfoStatus = (server: TestServer, token: string) =>
  fetch(`${server.url}/v2/openidc/user`, { headers: { authorization: `Bearer ${token}` } }).then(
    (r) => r.status,
  );

for (const kind of DATABASE_KINDS) {
  describe(`Refresh tokens with openid-client, on ${kind}`, () => {
    let server: TestServer;
    let rp: RelyingParty;
    before(async () => {
      server = await startTestServer(kind, { REFRESH_TOKEN_TTL: String(REFRESH_TOKEN_TTL) });
      rp = await registerRelyingParty(server, undefined, { grantTypes: ['refresh_token'] });
    });
    after(() => server.close());

    test('discovery lists the refresh_token grant and offline_access', () => {
      const metadata = rp.config.serverMetadata();
      // The credential issuers' pre-authorized code grant (OpenID4VCI §6.1) is this provider's too.
      assert.deepEqual(metadata.grant_types_supported, [
        'authorization_code',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:pre-authorized_code',
      ]);
      assert.ok(metadata.scopes_supported?.includes('offline_access'));
    });

    test('offline_access gives a refresh token; a refresh gives new tokens and a new refresh token', async () => {
      const first = await signedIn(server, rp);
      assert.ok(first.refresh_token?.startsWith('cfr_rt_'));
      assert.equal(first.scope, 'openid email offline_access');
      const sub = first.claims()!.sub;
      const { tokens } = await refresh(rp, first.refresh_token!);
      assert.ok(tokens);
      assert.notEqual(tokens.refresh_token, first.refresh_token);
      assert.notEqual(tokens.access_token, first.access_token);
      const claims = tokens.claims()!;
      assert.equal(claims.sub, sub);
      assert.equal(claims.nonce, undefined, 'a refreshed identity token has no nonce');
      assert.equal(claims.auth_time, first.claims()!.auth_time, 'the log-in time stays');
      assert.equal((await oidc.fetchUserInfo(rp.config, tokens.access_token, sub)).sub, sub);
      // Rotation keeps going: the new token refreshes again.
      assert.ok((await refresh(rp, tokens.refresh_token!)).tokens);
    });

    test('the family ends REFRESH_TOKEN_TTL after the log-in, whatever the rotations', async () => {
      const first = await signedIn(server, rp);
      const { tokens } = await refresh(rp, first.refresh_token!);
      const rows = await server.database.db
        .selectFrom('refresh_tokens')
        .select(['created_at', 'expires_at', 'family_id'])
        .orderBy('created_at')
        .execute();
      const family = rows.filter((r) => r.family_id === rows.at(-1)!.family_id);
      assert.equal(new Set(family.map((r) => r.expires_at)).size, 1);
      assert.ok(Math.abs(family[0]!.expires_at - family[0]!.created_at - REFRESH_TOKEN_TTL) <= 2);
      await server.database.db
        .updateTable('refresh_tokens')
        .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
        .where('family_id', '=', family[0]!.family_id)
        .execute();
      assert.deepEqual(await refresh(rp, tokens!.refresh_token!), { error: 'invalid_grant' });
    });

    test('a rotated refresh token used again revokes the whole family and its access tokens', async () => {
      const first = await signedIn(server, rp);
      const { tokens: second } = await refresh(rp, first.refresh_token!);
      assert.ok(second);
      assert.equal(await userinfoStatus(server, second.access_token), 200);
      // The thief (or a confused client) replays the first token.
      assert.deepEqual(await refresh(rp, first.refresh_token!), { error: 'invalid_grant' });
      assert.deepEqual(await refresh(rp, second.refresh_token!), { error: 'invalid_grant' });
      assert.equal(await userinfoStatus(server, second.access_token), 401);
      assert.equal(await userinfoStatus(server, first.access_token), 401);
    });

    test('a narrower scope is granted, a wider one refused without spending the token', async () => {
      const first = await signedIn(server, rp);
      assert.deepEqual(await refresh(rp, first.refresh_token!, { scope: 'openid profile' }), {
        error: 'invalid_scope',
      });
      assert.deepEqual(await refresh(rp, first.refresh_token!, { scope: 'email' }), {
        error: 'invalid_scope',
      });
      const { tokens } = await refresh(rp, first.refresh_token!, { scope: 'openid' });
      assert.ok(tokens);
      assert.equal(tokens.scope, 'openid');
      const userinfo = await oidc.fetchUserInfo(rp.config, tokens.access_token, tokens.claims()!.sub);
      assert.equal(userinfo.email, undefined, 'the narrowed token reads no e-mail');
      // The next refresh token keeps the granted scope (RFC 6749 §6).
      const { tokens: again } = await refresh(rp, tokens.refresh_token!);
      assert.equal(again?.scope, 'openid email offline_access');
    });

    test('no refresh token without offline_access, nor for a client without the grant', async () => {
      const plain = await signedIn(server, rp, 'openid');
      assert.equal(plain.refresh_token, undefined);
      const other = await registerRelyingParty(server);
      const tokens = await signedIn(server, other);
      assert.equal(tokens.refresh_token, undefined);
      assert.equal(tokens.scope, 'openid email', 'offline_access is dropped for a client without the grant');
      const stolen = await signedIn(server, rp);
      assert.deepEqual(await refresh(other, stolen.refresh_token!), { error: 'unauthorized_client' });
    });

    test("another client can neither use nor revoke a client's refresh token", async () => {
      const other = await registerRelyingParty(server, undefined, { grantTypes: ['refresh_token'] });
      const tokens = await signedIn(server, rp);
      assert.deepEqual(await refresh(other, tokens.refresh_token!), { error: 'invalid_grant' });
      await oidc.tokenRevocation(other.config, tokens.refresh_token!);
      assert.ok((await refresh(rp, tokens.refresh_token!)).tokens, 'still good for its own client');
    });

    test('revoking a refresh token ends its family and the access tokens beside it', async () => {
      const first = await signedIn(server, rp);
      const { tokens } = await refresh(rp, first.refresh_token!);
      await oidc.tokenRevocation(rp.config, tokens!.refresh_token!, { token_type_hint: 'refresh_token' });
      assert.deepEqual(await refresh(rp, tokens!.refresh_token!), { error: 'invalid_grant' });
      assert.equal(await userinfoStatus(server, tokens!.access_token), 401);
    });

    test('a client that loses the grant or its secret can refresh no more', async () => {
      const own = await registerRelyingParty(server, undefined, { grantTypes: ['refresh_token'] });
      const a = await signedIn(server, own);
      const b = await signedIn(server, own);
      await setClientSettings(server.database.db, createFieldCipher(server.masterKey), own.clientId, {
        grantTypes: [],
      });
      assert.deepEqual(await refresh(own, a.refresh_token!), { error: 'unauthorized_client' });
      await setClientSettings(server.database.db, createFieldCipher(server.masterKey), own.clientId, {
        grantTypes: ['refresh_token'],
      });
      await rotateClientSecret(server.database.db, own.clientId);
      await assert.rejects(oidc.refreshTokenGrant(own.config, b.refresh_token!), (error: Error) =>
        /invalid_client/.test(String((error as oidc.ResponseBodyError).error ?? error.message)),
      );
    });

    test('bad refresh requests are 400 with the error body', async () => {
      const post = (body: Record<string, string>) =>
        server.request('POST', '/v2/openidc/token', {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            client_id: String(rp.clientId),
            client_secret: rp.clientSecret,
            ...body,
          }).toString(),
        });
      const missing = await post({ grant_type: 'refresh_token' });
      assert.equal(missing.status, 400);
      assert.deepEqual(missing.body, {
        error: 'invalid_request',
        error_description: '/body/refresh_token is required for refresh_token.',
        details: [{ path: '/body/refresh_token', message: 'is required' }],
      });
      const unknown = await post({ grant_type: 'refresh_token', refresh_token: 'cfr_rt_nothing' });
      assert.equal(unknown.status, 400);
      assert.equal((unknown.body as { error: string }).error, 'invalid_grant');
      const long = await post({ grant_type: 'refresh_token', refresh_token: 'x'.repeat(600) });
      assert.equal(long.status, 400);
    });
  });
}

describe('50 concurrent uses of one refresh token at two instances on one PostgreSQL', {
  skip: !DATABASE_KINDS.includes('postgres'),
}, () => {
  test('exactly one new token pair, then the whole family is revoked', async () => {
    const first = await startTestServer('postgres');
    const config = readConfig({ ...first.env, PORT: '0' });
    const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: first.testDatabase.dataDir });
    const second = await buildApp({ config, database, masterKey: first.masterKey });
    await second.listen({ host: '127.0.0.1', port: 0 });
    try {
      const rp = await registerRelyingParty(first, undefined, { grantTypes: ['refresh_token'] });
      const tokens = await signedIn(first, rp);
      // openid-client at the second instance: the same metadata, its token endpoint there.
      const address = second.server.address() as { port: number };
      const { supportsPKCE: _, ...metadata } = rp.config.serverMetadata();
      const atSecond = new oidc.Configuration(
        { ...metadata, token_endpoint: `http://127.0.0.1:${address.port}/v2/openidc/token` },
        String(rp.clientId),
        rp.clientSecret,
      );
      oidc.allowInsecureRequests(atSecond);
      const attempts = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          refresh({ ...rp, config: i % 2 ? atSecond : rp.config }, tokens.refresh_token!),
        ),
      );
      const winners = attempts.filter((a) => a.tokens);
      assert.equal(winners.length, 1, 'exactly one refresh succeeds');
      assert.ok(attempts.filter((a) => !a.tokens).every((a) => a.error === 'invalid_grant'));
      const won = winners[0]!.tokens!;
      assert.deepEqual(await refresh(rp, won.refresh_token!), { error: 'invalid_grant' });
      assert.equal(await userinfoStatus(first, won.access_token), 401);
    } finally {
      await second.close();
      await database.close();
      await first.close();
    }
  });
});
