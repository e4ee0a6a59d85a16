// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import * as oidc from 'openid-client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { openDatabase } from '../../src/db/database.ts';
import { createMigrator, migrateToLatest } from '../../src/db/migrate.ts';
import { coffer } from '../helpers/cli.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';
import { type SecondInstance, startSecondInstance } from '../helpers/server.ts';
import {
  authorizationRequest,
  interactionView,
  logInWithWallet,
  REDIRECT_URI,
  type RelyingParty,
  registerRelyingParty,
} from '../oidc/flow-helpers.ts';
import { type IssuerWorld, startIssuerWorld } from './issuer-helpers.ts';

const OPENID_SCOPES = ['openid', 'profile', 'email', 'address', 'phone', 'offline_access'];
const CARD = {
  format: 'dc+sd-jwt',
  vct: 'https://example.edu/member',
  claims: [{ path: ['email'] }],
  from_profile: { email: 'email_address' },
};

/**
 * An issuer tenant gives a configuration a scope; another tenant's app sends its users to log in.
 * The attacker's aim: the app's log-in lands on the issuer's issuance (its log-in page, its sign-up,
 * a vci_ code back to the app) instead of the app's own log-in.
 */
for (const kind of DATABASE_KINDS) {
  describe(`issuance scopes never capture a log-in (${kind})`, () => {
    let world: IssuerWorld;
    let rp: RelyingParty;
    before(async () => {
      world = await startIssuerWorld(kind);
      const put = await world.api('PUT', '/v1/issuer/configurations/card', { ...CARD, scope: 'membership' });
      assert.equal(put.status, 201, put.text);
      const shop = await world.server.createMaster('Shop');
      rp = await registerRelyingParty(world.server, shop.clientId);
    });
    after(() => world.close());

    it('a configuration cannot take a scope of OpenID Connect', async () => {
      for (const scope of OPENID_SCOPES) {
        const put = await world.api('PUT', '/v1/issuer/configurations/phone', { ...CARD, scope });
        assert.equal(put.status, 400, `${scope}: ${put.text}`);
        assert.equal(put.body.error, 'invalid_request');
        assert.equal(put.body.details[0].path, '/body/scope');
      }
      const configurations = await world.api('GET', '/v1/issuer/configurations');
      assert.deepEqual(
        configurations.body.data.map((c: any) => c.id),
        ['card'],
      );
    });

    it("another tenant's app asking for openid and the issuer's scope logs its person in to the app", async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      const { url } = await authorizationRequest(rp, { scope: 'openid membership' });
      const started = await fetch(url, { redirect: 'manual' });
      const view = await interactionView(world.server, started.headers.get('location')!);
      assert.equal(view.body.kind, 'login');
      assert.equal(view.body.client.client_id, rp.clientId, 'the app asks, not the issuer');

      const login = await logInWithWallet(world.server, rp, account, { scope: 'openid membership' });
      assert.equal(login.redirectTo.origin + login.redirectTo.pathname, REDIRECT_URI);
      const tokens = await oidc.authorizationCodeGrant(rp.config, login.redirectTo, {
        pkceCodeVerifier: login.verifier,
        expectedNonce: login.nonce,
        expectedState: login.state,
      });
      assert.equal(tokens.claims()!['eth_address'], account.address);
      assert.equal(tokens.scope, 'openid', 'the issuance scope is not granted to the app');
    });

    it("a registered app asking for the issuer's scope without openid gets the OP's refusal", async () => {
      const { url, state } = await authorizationRequest(rp, { scope: 'membership' });
      const answer = await fetch(url, { redirect: 'manual' });
      assert.equal(answer.status, 303);
      const back = new URL(answer.headers.get('location')!);
      assert.equal(back.origin + back.pathname, REDIRECT_URI);
      assert.equal(back.searchParams.get('error'), 'invalid_scope');
      assert.equal(back.searchParams.get('state'), state);
    });

    it("a registered app pushing the issuer's scope gets the OP's pushed request, never an issuance's", async () => {
      const par = (scope: string, auth: 'basic' | 'body') =>
        fetch(`${world.server.url}/v2/openidc/par`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            ...(auth === 'basic'
              ? {
                  authorization: `Basic ${Buffer.from(`${rp.clientId}:${rp.clientSecret}`).toString('base64')}`,
                }
              : {}),
          },
          body: new URLSearchParams({
            ...(auth === 'body' ? { client_id: String(rp.clientId), client_secret: rp.clientSecret } : {}),
            response_type: 'code',
            redirect_uri: REDIRECT_URI,
            scope,
            code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
            code_challenge_method: 'S256',
          }),
        });
      for (const auth of ['basic', 'body'] as const) {
        const withoutOpenid = await par('membership', auth);
        assert.equal(withoutOpenid.status, 400, auth);
        assert.equal(((await withoutOpenid.json()) as any).error, 'invalid_scope');
        const withOpenid = await par('openid membership', auth);
        assert.equal(withOpenid.status, 201, auth);
        const { request_uri } = (await withOpenid.json()) as any;
        assert.doesNotMatch(request_uri, /vci_/, 'an OP request_uri');
      }
    });

    it('a wallet (no registered client) still reaches the issuance through the scope', async () => {
      const answer = await fetch(
        `${world.server.url}/v2/openidc/authorize?${new URLSearchParams({
          client_id: 'https://wallet.example',
          response_type: 'code',
          redirect_uri: 'https://wallet.example/callback',
          scope: 'membership',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })}`,
        { redirect: 'manual' },
      );
      assert.equal(answer.status, 303, await answer.text());
      const view = await interactionView(world.server, answer.headers.get('location')!);
      assert.equal(view.body.kind, 'issuer-login');
    });

    it('two issuers racing for one scope on two instances: one has it, the other is told 409', async () => {
      const second: SecondInstance = await startSecondInstance(world.server);
      try {
        const other = await world.server.createMaster('College');
        const enabled = await coffer(world.server, 'issuer', 'enable', '--client', String(other.clientId));
        assert.equal(enabled.code, 0, enabled.stderr);
        for (let round = 0; round < 5; round++) {
          const scope = `contested_${round}`;
          const answers = await Promise.all([
            world.server.request('PUT', `/v1/issuer/configurations/contested_${round}`, {
              headers: { 'x-api-token': world.token },
              body: { ...CARD, scope },
            }),
            second.request('PUT', `/v1/issuer/configurations/contested_${round}`, {
              headers: { 'x-api-token': other.token },
              body: { ...CARD, scope },
            }),
          ]);
          assert.deepEqual(
            answers.map((a) => a.status).sort(),
            [201, 409],
            answers.map((a) => a.text).join(' | '),
          );
        }
      } finally {
        await second.close();
      }
    });
  });

  describe(`migration 0016 and the scopes configurations already had (${kind})`, () => {
    it('takes reserved scopes away and keeps a scope for its first configuration only', async (t) => {
      const testDatabase = await createTestDatabase(kind);
      const database = openDatabase({
        databaseUrl: testDatabase.databaseUrl,
        dataDir: testDatabase.dataDir,
        schema: testDatabase.schema,
      });
      t.after(async () => {
        await database.close();
        await testDatabase.drop();
      });
      const db = database.db as any;
      const migrator = await createMigrator(db, database.dialect);
      assert.equal((await migrator.migrateTo('0015-unreferenced-blocks')).error, undefined);
      const now = new Date().toISOString();
      for (const id of [1, 2]) {
        await db
          .insertInto('clients')
          .values({
            name: `T${id}`,
            is_master: 1,
            is_verifier: 0,
            parent_id: null,
            redirect_uris: '[]',
            created_at: now,
          })
          .execute();
        await db
          .insertInto('issuers')
          .values({
            client_id: id,
            key_sealed: 'x',
            chain_pem: 'x',
            bbs_key_sealed: 'x',
            bbs_did: 'x',
            created_at: now,
          })
          .execute();
      }
      const configuration = (scope: string) => JSON.stringify({ ...CARD, scope });
      const rows = [
        {
          client_id: 1,
          configuration_id: 'a',
          configuration: configuration('phone'),
          updated_at: '2026-01-01',
        },
        {
          client_id: 1,
          configuration_id: 'b',
          configuration: configuration('card'),
          updated_at: '2026-01-02',
        },
        {
          client_id: 2,
          configuration_id: 'c',
          configuration: configuration('card'),
          updated_at: '2026-01-03',
        },
      ];
      await db.insertInto('issuer_configurations').values(rows).execute();
      await migrateToLatest(db, database.dialect);
      const after = await db
        .selectFrom('issuer_configurations')
        .select(['configuration_id', 'scope', 'configuration'])
        .orderBy('configuration_id')
        .execute();
      assert.deepEqual(
        after.map((r: any) => [r.configuration_id, r.scope, JSON.parse(r.configuration).scope]),
        [
          ['a', null, undefined],
          ['b', 'card', 'card'],
          ['c', null, undefined],
        ],
      );
      await assert.rejects(
        sql`update issuer_configurations set scope = 'card' where configuration_id = 'c'`.execute(db),
        'the scope is unique',
      );
    });
  });
}
