import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { privateKeyToAccount } from 'viem/accounts';
import { buildApp } from '../../src/app.ts';
import { readConfig } from '../../src/config/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { hashSecret } from '../../src/keys/secrets.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { logInWithWallet, REDIRECT_URI, type RelyingParty, registerRelyingParty } from './flow-helpers.ts';

const bob = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');

for (const kind of DATABASE_KINDS) {
  describe(`token endpoint on ${kind}`, () => {
    let server: TestServer;
    let rp: RelyingParty;
    before(async () => {
      server = await startTestServer(kind);
      rp = await registerRelyingParty(server);
    });
    after(() => server.close());

    const exchange = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      server.request('POST', '/v2/openidc/token', { body, headers });
    const contractBody = (code: string, verifier: string) => ({
      grant_type: 'authorization_code',
      code,
      client_id: String(rp.clientId),
      client_secret: rp.clientSecret,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    });
    const freshCode = async () => {
      const login = await logInWithWallet(server, rp, bob);
      return { code: login.redirectTo.searchParams.get('code')!, verifier: login.verifier };
    };

    test("the contract's JSON exchange answers exactly its fields plus expires_in, not cacheable", async () => {
      const { code, verifier } = await freshCode();
      const r = await exchange(contractBody(code, verifier));
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), [
        'access_token',
        'expire_in',
        'expires_in',
        'id_token',
        'scope',
        'token_type',
      ]);
      assert.equal(r.body.scope, 'openid');
      assert.equal(r.body.token_type, 'Bearer');
      assert.equal(r.body.expire_in, 3600);
      assert.equal(r.body.expires_in, 3600);
      assert.equal(r.headers.get('cache-control'), 'no-store');
      const me = await server.request('GET', '/v2/openidc/user', {
        headers: { authorization: `Bearer ${r.body.access_token}` },
      });
      assert.equal(me.status, 200);
      assert.equal(me.body.eth_address, bob.address);
    });

    test("userinfo and the credential endpoints answer with x-fapi-interaction-id: the caller's UUID, else a new one", async () => {
      const { code, verifier } = await freshCode();
      const token = (await exchange(contractBody(code, verifier))).body.access_token as string;
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
      const sent = 'c0ffee00-1b2c-4d5e-8f90-a1b2c3d4e5f6';
      const userinfo = (headers: Record<string, string>) =>
        server.request('GET', '/v2/openidc/user', {
          headers: { authorization: `Bearer ${token}`, ...headers },
        });

      const echoed = await userinfo({ 'x-fapi-interaction-id': sent });
      assert.equal(echoed.status, 200);
      assert.equal(echoed.headers.get('x-fapi-interaction-id'), sent);
      const fresh = await userinfo({});
      assert.match(fresh.headers.get('x-fapi-interaction-id') ?? '', uuid);
      const junk = await userinfo({ 'x-fapi-interaction-id': 'not-a-uuid <script>' });
      assert.match(junk.headers.get('x-fapi-interaction-id') ?? '', uuid, 'only a UUID is echoed');
      // On a refusal too: the id is what the client's support desk asks for.
      const refused = await server.request('GET', '/v2/openidc/user', {
        headers: { 'x-fapi-interaction-id': sent },
      });
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get('x-fapi-interaction-id'), sent);
      for (const path of ['credential', 'deferred-credential', 'notification']) {
        const answer = await server.request('POST', `/issuers/999999/${path}`, {
          body: {},
          headers: { 'x-fapi-interaction-id': sent },
        });
        assert.ok(answer.status >= 400 && answer.status < 500, `${path}: ${answer.status}`);
        assert.equal(answer.headers.get('x-fapi-interaction-id'), sent, path);
      }
      // Not on endpoints that are no protected resource.
      assert.equal(
        (await server.request('GET', '/.well-known/openid-configuration')).headers.get(
          'x-fapi-interaction-id',
        ),
        null,
      );
    });

    test('the form body with HTTP Basic works too (RFC 6749)', async () => {
      const { code, verifier } = await freshCode();
      const basic = Buffer.from(`${rp.clientId}:${encodeURIComponent(rp.clientSecret)}`).toString('base64');
      const form = new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      });
      const r = await fetch(`${server.url}/v2/openidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
        body: form.toString(),
      });
      assert.equal(r.status, 200, await r.clone().text());
      assert.ok(((await r.json()) as { id_token?: string }).id_token);
    });

    test('a replayed code → invalid_grant, and the access token issued from it then gets 401', async () => {
      const { code, verifier } = await freshCode();
      const first = await exchange(contractBody(code, verifier));
      assert.equal(first.status, 200);
      const bearer = { authorization: `Bearer ${first.body.access_token}` };
      assert.equal((await server.request('GET', '/v2/openidc/user', { headers: bearer })).status, 200);
      const replay = await exchange(contractBody(code, verifier));
      assert.equal(replay.status, 400);
      assert.equal(replay.body.error, 'invalid_grant');
      const after = await server.request('GET', '/v2/openidc/user', { headers: bearer });
      assert.equal(after.status, 401);
      assert.equal(after.body.error, 'invalid_token');
      assert.match(after.headers.get('www-authenticate')!, /Bearer error="invalid_token"/);
    });

    test('a wrong client secret → 401 invalid_client (and Basic gets WWW-Authenticate)', async () => {
      const { code, verifier } = await freshCode();
      const r = await exchange({ ...contractBody(code, verifier), client_secret: 'cfr_cs_wrong' });
      assert.equal(r.status, 401);
      assert.equal(r.body.error, 'invalid_client');
      const basic = Buffer.from(`${rp.clientId}:nope`).toString('base64');
      const { client_secret: _s, ...rest } = contractBody(code, verifier);
      const viaBasic = await exchange(rest, { authorization: `Basic ${basic}` });
      assert.equal(viaBasic.status, 401);
      assert.match(viaBasic.headers.get('www-authenticate')!, /^Basic/);
      const unknown = await exchange({ ...contractBody(code, verifier), client_id: '999999' });
      assert.equal(unknown.body.error, 'invalid_client');
    });

    test('wrong redirect URI, expired code, wrong PKCE verifier, unknown code → invalid_grant', async () => {
      const a = await freshCode();
      const wrongRedirect = await exchange({
        ...contractBody(a.code, a.verifier),
        redirect_uri: 'https://rp.example/other',
      });
      assert.equal(wrongRedirect.body.error, 'invalid_grant');
      const b = await freshCode();
      const wrongVerifier = await exchange(contractBody(b.code, oidc.randomPKCECodeVerifier()));
      assert.equal(wrongVerifier.body.error, 'invalid_grant');
      const missingVerifier = await freshCode();
      const { code_verifier: _v, ...noVerifier } = contractBody(
        missingVerifier.code,
        missingVerifier.verifier,
      );
      assert.equal((await exchange(noVerifier)).body.error, 'invalid_grant');
      const c = await freshCode();
      await server.database.db
        .updateTable('authorization_codes')
        .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
        .where('code_hash', '=', hashSecret(c.code))
        .execute();
      const expired = await exchange(contractBody(c.code, c.verifier));
      assert.equal(expired.status, 400);
      assert.equal(expired.body.error, 'invalid_grant');
      assert.match(expired.body.error_description, /expired/);
      const unknown = await exchange(contractBody('no-such-code', a.verifier));
      assert.equal(unknown.body.error, 'invalid_grant');
    });

    test('a code issued to one client cannot be redeemed by another', async () => {
      const other = await registerRelyingParty(server);
      const { code, verifier } = await freshCode();
      const r = await exchange({
        ...contractBody(code, verifier),
        client_id: String(other.clientId),
        client_secret: other.clientSecret,
      });
      assert.equal(r.body.error, 'invalid_grant');
    });

    test('bad requests: unknown grant type, missing fields, both Basic and client_secret, duplicated form field', async () => {
      const { code, verifier } = await freshCode();
      const grant = await exchange({ ...contractBody(code, verifier), grant_type: 'password' });
      assert.equal(grant.status, 400);
      assert.equal(grant.body.error, 'unsupported_grant_type');
      const missing = await exchange({
        grant_type: 'authorization_code',
        client_id: '1',
        client_secret: 'x',
      });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error, 'invalid_request');
      assert.ok(missing.body.details.some((d: { path: string }) => d.path === '/body/code'));
      const basic = Buffer.from(`${rp.clientId}:${rp.clientSecret}`).toString('base64');
      const both = await exchange(contractBody(code, verifier), { authorization: `Basic ${basic}` });
      assert.equal(both.body.error, 'invalid_request');
      const dup = await fetch(`${server.url}/v2/openidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code&code=a&code=b&redirect_uri=x&client_id=1&client_secret=y',
      });
      assert.equal(dup.status, 400);
      assert.equal(((await dup.json()) as { error: string }).error, 'invalid_request');
      const text = await fetch(`${server.url}/v2/openidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'x',
      });
      assert.equal(text.status, 415);
    });

    test('50 concurrent redemptions of one code → exactly one success', async () => {
      const { code, verifier } = await freshCode();
      const results = await Promise.all(
        Array.from({ length: 50 }, () => exchange(contractBody(code, verifier))),
      );
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(','));
      assert.ok(results.filter((r) => r.status !== 200).every((r) => r.body.error === 'invalid_grant'));
    });

    test('userinfo refuses missing, malformed, tampered, foreign-issuer and alg=none tokens', async () => {
      const { code, verifier } = await freshCode();
      const token = (await exchange(contractBody(code, verifier))).body.access_token as string;
      const [h, p, s] = token.split('.');
      const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
      const forge = (claims: object) =>
        `${h}.${Buffer.from(JSON.stringify({ ...payload, ...claims })).toString('base64url')}.${s}`;
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${p}.`;
      for (const authorization of [
        undefined,
        'Bearer',
        'Bearer abc',
        `Basic ${token}`,
        `Bearer ${forge({ sub: '999999' })}`,
        `Bearer ${none}`,
        `Bearer ${token}x`,
      ]) {
        const r = await server.request(
          'GET',
          '/v2/openidc/user',
          authorization ? { headers: { authorization } } : {},
        );
        assert.equal(r.status, 401, String(authorization));
        assert.equal(r.body.error, 'invalid_token');
      }
    });
  });
}

describe('two instances on one PostgreSQL, and key rotation', {
  skip: !DATABASE_KINDS.includes('postgres'),
}, () => {
  test('a code issued by one instance is redeemed at the other; a rotated key keeps old tokens valid', async () => {
    const first = await startTestServer('postgres');
    // A second instance: its own process state, the same database and master key.
    const config = readConfig({ ...first.env, PORT: '0' });
    const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: first.testDatabase.dataDir });
    const second = await buildApp({ config, database, masterKey: first.masterKey });
    await second.ready();
    try {
      const rp = await registerRelyingParty(first);
      const login = await logInWithWallet(first, rp, bob);
      const code = login.redirectTo.searchParams.get('code')!;
      const r = await second.inject({
        method: 'POST',
        url: '/v2/openidc/token',
        payload: {
          grant_type: 'authorization_code',
          code,
          client_id: String(rp.clientId),
          client_secret: rp.clientSecret,
          redirect_uri: REDIRECT_URI,
          code_verifier: login.verifier,
        },
      });
      assert.equal(r.statusCode, 200, r.body);
      const token = r.json().access_token as string;
      // Issued at the second instance, accepted by the first.
      assert.equal(
        (await first.request('GET', '/v2/openidc/user', { headers: { authorization: `Bearer ${token}` } }))
          .status,
        200,
      );
    } finally {
      await second.close();
      await database.close();
      await first.close();
    }
  });
});

describe('signing-key rotation', () => {
  test('after `keys rotate` new tokens use the new key; tokens signed before still verify through the JWKS', async () => {
    const server = await startTestServer('sqlite');
    const config = readConfig({ ...server.env, PORT: '0' });
    const database = openDatabase({ databaseUrl: undefined, dataDir: server.testDatabase.dataDir });
    try {
      const rp = await registerRelyingParty(server);
      const redeem = async (app: { inject: TestServer['app']['inject'] }) => {
        const login = await logInWithWallet(server, rp, bob);
        const r = await app.inject({
          method: 'POST',
          url: '/v2/openidc/token',
          payload: {
            grant_type: 'authorization_code',
            code: login.redirectTo.searchParams.get('code')!,
            client_id: String(rp.clientId),
            client_secret: rp.clientSecret,
            redirect_uri: REDIRECT_URI,
            code_verifier: login.verifier,
          },
        });
        return r.json().access_token as string;
      };
      const before = await redeem(server.app);
      const oldKid = decodeKid(before);

      const { rotateSigningKey } = await import('../../src/keys/signing-keys.ts');
      const { createFieldCipher } = await import('../../src/keys/field-cipher.ts');
      const { kid: newKid } = await rotateSigningKey(database.db, createFieldCipher(server.masterKey), 3600);
      // An instance started after the rotation signs with the new key at once.
      const fresh = await buildApp({ config, database, masterKey: server.masterKey });
      await fresh.ready();
      const after = await redeem(fresh);
      assert.equal(decodeKid(after), newKid);
      assert.notEqual(newKid, oldKid);

      const jwks = (await fresh.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
      assert.deepEqual(jwks.keys.map((k: { kid: string }) => k.kid).sort(), [newKid, oldKid].sort());
      for (const token of [before, after]) {
        const r = await fresh.inject({
          method: 'GET',
          url: '/v2/openidc/user',
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(r.statusCode, 200, r.body);
        // The instance started before the rotation learns the new kid on first sight.
        assert.equal(
          (await server.request('GET', '/v2/openidc/user', { headers: { authorization: `Bearer ${token}` } }))
            .status,
          200,
        );
      }
      await fresh.close();
    } finally {
      await database.close();
      await server.close();
    }
  });
});

function decodeKid(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid;
}
