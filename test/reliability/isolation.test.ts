import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createApiToken } from '../../src/clients/client-admin.ts';
import { revokeApiToken } from '../../src/clients/client-repository.ts';
import { logInUser, registerPersonContext } from '../credentials/helpers.ts';
import { createStockIssuer, personCredential } from '../credentials/stock-issuer.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { logInWithWallet, REDIRECT_URI, registerRelyingParty } from '../oidc/flow-helpers.ts';

/**
 * The isolation matrix (issue 7): every endpoint against every credential that must not open it
 * (another tenant's API token, a sub-client's token, a revoked token, another user's access
 * token, a revoked access token, none). Each answer is 401, 403 or 404 (422 where a credential
 * names someone out of reach), and no answer carries the other tenant's or user's data.
 */
const subClientBody = (subdomain: string) => ({
  name: `Tenant ${subdomain}`,
  address_1: '1 Road',
  country: 'GB',
  province: 'GB-ENG',
  city: 'London',
  timezone: 'Europe/London',
  domain: `${subdomain}.example.org`,
  subdomain,
});

for (const kind of DATABASE_KINDS) {
  describe(`isolation matrix on ${kind}`, () => {
    let server: TestServer;
    const secrets: string[] = [];
    let masterA: string;
    let masterB: string;
    let subA: number;
    let subATokens: string;
    let revokedApiToken: string;
    let aliceCredentialId: string;
    let aliceWallet: string;
    let alice: Awaited<ReturnType<typeof logInUser>>;
    let bob: Awaited<ReturnType<typeof logInUser>>;
    let revokedAccessToken: string;
    let rpB: Awaited<ReturnType<typeof registerRelyingParty>>;

    before(async () => {
      server = await startTestServer(kind);
      masterA = (await server.createMaster('Master A')).token;
      masterB = (await server.createMaster('Master B')).token;
      const created = await server.request('POST', '/v1/sub_client', {
        headers: { 'x-api-token': masterA },
        body: subClientBody(`secret-tenant-${kind}`),
      });
      subA = created.body.data.client_id;
      subATokens = (await createApiToken(server.database.db, subA)).api_token;
      revokedApiToken = (await createApiToken(server.database.db, subA)).api_token;
      await revokeApiToken(server.database.db, revokedApiToken);

      const rpA = await registerRelyingParty(server);
      rpB = await registerRelyingParty(server);
      const aliceAccount = privateKeyToAccount(generatePrivateKey());
      aliceWallet = aliceAccount.address;
      alice = await logInUser(server, rpA, aliceAccount);
      bob = await logInUser(server, rpB, privateKeyToAccount(generatePrivateKey()));

      await registerPersonContext(server);
      const issuer = await createStockIssuer();
      const vc = await issuer.issue(
        personCredential(issuer.did, alice.did, { first_name: 'Alicia', last_name: 'Secretsdottir' }),
      );
      aliceCredentialId = vc['id'] as string;
      const stored = await server.request('POST', '/v1/vc/issuer/store', {
        headers: { 'x-api-token': masterA },
        body: { vc },
      });
      assert.equal(stored.status, 201);
      secrets.push('Secretsdottir', `secret-tenant-${kind}`, alice.did, stored.body.data.cid);

      // An access token whose code was replayed: revoked.
      const login = await logInWithWallet(server, rpA, aliceAccount);
      const body = {
        grant_type: 'authorization_code',
        code: login.redirectTo.searchParams.get('code')!,
        client_id: String(rpA.clientId),
        client_secret: rpA.clientSecret,
        redirect_uri: REDIRECT_URI,
        code_verifier: login.verifier,
      };
      revokedAccessToken = (await server.request('POST', '/v2/openidc/token', { body })).body.access_token;
      assert.equal((await server.request('POST', '/v2/openidc/token', { body })).status, 400);
    });
    after(() => server.close());

    /** Every answer to the intruder: the expected status, and none of the victim's data. */
    async function refused(
      expected: number[],
      method: string,
      path: string,
      headers: Record<string, string>,
      body?: unknown,
    ) {
      const r = await server.request(method, path, { headers, body });
      assert.ok(
        expected.includes(r.status),
        `${method} ${path} with ${JSON.stringify(headers).slice(0, 60)}: ${r.status} ${r.text.slice(0, 200)}`,
      );
      for (const secret of secrets)
        assert.equal(r.text.includes(secret), false, `${method} ${path} leaked ${secret}`);
      if (r.status >= 400) assert.equal(typeof r.body.error, 'string');
      return r;
    }

    const apiEndpoints = () =>
      [
        ['GET', '/v1/sub_client', undefined],
        ['GET', `/v1/sub_client/${subA}`, undefined],
        ['PUT', `/v1/sub_client/${subA}`, subClientBody('taken-over')],
        ['POST', '/v1/sub_client', subClientBody(`intruder-${kind}`)],
      ] as const;

    test("another master's API token: the sub-client is 404, acting inside it 403, the list without it", async () => {
      await refused([404], 'GET', `/v1/sub_client/${subA}`, { 'x-api-token': masterB });
      await refused(
        [404],
        'PUT',
        `/v1/sub_client/${subA}`,
        { 'x-api-token': masterB },
        subClientBody('taken-over'),
      );
      const list = await refused([200], 'GET', '/v1/sub_client?page=1&per_page=99', {
        'x-api-token': masterB,
      });
      assert.equal(list.body.data.length, 0);
      await refused([403], 'GET', '/v1/sub_client', {
        'x-api-token': masterB,
        'x-api-subclient-id': String(subA),
      });
      await refused(
        [403],
        'POST',
        '/v1/user/create',
        { 'x-api-token': masterB, 'x-api-subclient-id': String(subA) },
        { profile: { email_address: 'x@example.org', first_name: 'X', last_name: 'Y' } },
      );
    });

    test("a sub-client's own API token manages no sub-clients (403) and cannot act in another's tenant", async () => {
      for (const [method, path, body] of apiEndpoints()) {
        await refused([403], method, path, { 'x-api-token': subATokens }, body);
      }
      await refused(
        [403],
        'POST',
        '/v1/user/create',
        { 'x-api-token': subATokens, 'x-api-subclient-id': String(subA) },
        { profile: { email_address: 'x@example.org', first_name: 'X', last_name: 'Y' } },
      );
    });

    test('a revoked or unknown API token, or none, is 401 on every API-token endpoint', async () => {
      const endpoints = [
        ...apiEndpoints(),
        [
          'POST',
          '/v1/user/create',
          { profile: { email_address: 'x@example.org', first_name: 'X', last_name: 'Y' } },
        ],
        ['POST', '/v1/vc/issuer/store', { vc: {} }],
      ] as const;
      for (const headers of [
        { 'x-api-token': revokedApiToken },
        { 'x-api-token': 'cfr_at_unknown' },
        {},
      ] as Array<Record<string, string>>) {
        for (const [method, path, body] of endpoints) await refused([401], method, path, headers, body);
      }
    });

    test("another organisation cannot reach a user's wallet with a credential", async () => {
      const issuer = await createStockIssuer();
      const vc = await issuer.issue(personCredential(issuer.did, `did:pkh:eip155:1:${aliceWallet}`));
      const r = await refused([422], 'POST', '/v1/vc/issuer/store', { 'x-api-token': masterB }, { vc });
      assert.match(r.body.error_description, /not the wallet of a user in your tenants/);
    });

    test("another user's access token sees only its own credentials; the other's are 404", async () => {
      const list = await refused([200], 'GET', '/v1/openidc/credentials', bob.bearer);
      assert.deepEqual(list.body.data, []);
      const info = await refused([200], 'GET', '/v2/openidc/user', bob.bearer);
      assert.equal(info.body.did_wallet_address, bob.did);
      await refused([404], 'POST', '/v1/openidc/credentials/proof', bob.bearer, {
        vcIdFields: { [aliceCredentialId]: ['/credentialSubject/first_name'] },
      });
      await refused(
        [404],
        'DELETE',
        `/v1/openidc/credentials/${encodeURIComponent(aliceCredentialId)}`,
        bob.bearer,
      );
      const still = await server.request('GET', '/v1/openidc/credentials', { headers: alice.bearer });
      assert.deepEqual(
        still.body.data.map((c: { id: string }) => c.id),
        [aliceCredentialId],
      );
    });

    test("another client cannot revoke a user's access token, nor can an API token", async () => {
      const basic = `Basic ${Buffer.from(`${rpB.clientId}:${rpB.clientSecret}`).toString('base64')}`;
      const revoked = await fetch(`${server.url}/v2/openidc/revoke`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${alice.accessToken}`,
      });
      assert.equal(revoked.status, 200);
      assert.equal((await server.request('GET', '/v2/openidc/user', { headers: alice.bearer })).status, 200);
      await refused(
        [401],
        'POST',
        '/v2/openidc/revoke',
        { 'x-api-token': masterA },
        { token: alice.accessToken },
      );
      assert.equal((await server.request('GET', '/v2/openidc/user', { headers: alice.bearer })).status, 200);
    });

    test('a revoked, forged or missing access token is 401 on every bearer endpoint', async () => {
      const forged = `${alice.accessToken.slice(0, alice.accessToken.lastIndexOf('.'))}.${'A'.repeat(86)}`;
      for (const authorization of [
        `Bearer ${revokedAccessToken}`,
        `Bearer ${forged}`,
        'Bearer x',
        undefined,
      ]) {
        const headers: Record<string, string> = authorization ? { authorization } : {};
        await refused([401], 'GET', '/v2/openidc/user', headers);
        await refused([401], 'GET', '/v1/openidc/credentials', headers);
        await refused([401], 'POST', '/v1/openidc/credentials/proof', headers, {
          vcIdFields: { [aliceCredentialId]: [] },
        });
        await refused(
          [401],
          'DELETE',
          `/v1/openidc/credentials/${encodeURIComponent(aliceCredentialId)}`,
          headers,
        );
      }
    });

    test('an API token is no bearer token, and an access token is no API token', async () => {
      await refused([401], 'GET', '/v1/openidc/credentials', { authorization: `Bearer ${masterA}` });
      await refused([401], 'DELETE', `/v1/openidc/credentials/${encodeURIComponent(aliceCredentialId)}`, {
        authorization: `Bearer ${masterA}`,
      });
      await refused([401], 'GET', '/v1/sub_client', { 'x-api-token': alice.accessToken });
    });
  });
}
