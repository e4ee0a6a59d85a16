import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildApp } from '../../src/app.ts';
import { createApiToken, createClient } from '../../src/clients/client-admin.ts';
import { readConfig } from '../../src/config/config.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { createEmailIndex } from '../../src/keys/blind-index.ts';
import { logInUser } from '../credentials/helpers.ts';
import { findAtRest } from '../helpers/at-rest.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { leaksInternals, type TestServer } from '../helpers/server.ts';
import {
  decideIssuance,
  type HostedWallet,
  type IssuanceWorld,
  startIssuance,
  startIssuanceWorld,
} from '../oid4vci/issuance-helpers.ts';
import { minimalProfile } from '../users/helpers.ts';

/** Every block an account's rows name, read from the database as the erasure will find them. */
async function blocksOfAccount(server: TestServer, userId: number): Promise<string[]> {
  const { db } = server.database;
  const user = await db
    .selectFrom('users')
    .select('profile_cid')
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  const credentials = await db
    .selectFrom('credentials')
    .select(['cid', 'prepared_cid', 'credential_pk'])
    .where('user_id', '=', userId)
    .execute();
  const copies = credentials.length
    ? await db
        .selectFrom('credential_copies')
        .select('cid')
        .where(
          'credential_pk',
          'in',
          credentials.map((c) => c.credential_pk),
        )
        .execute()
    : [];
  return [
    ...new Set([
      user.profile_cid,
      ...credentials.flatMap((c) => [c.cid, ...(c.prepared_cid ? [c.prepared_cid] : [])]),
      ...copies.map((c) => c.cid),
    ]),
  ];
}

const blockFile = (server: TestServer, cid: string) =>
  path.join(server.testDatabase.dataDir, 'blocks', cid.slice(-3, -1), cid);

/** The person receives a Personal ID (dc+sd-jwt) by OpenID4VCI from the test issuer. */
async function receivePid(world: IssuanceWorld, wallet: HostedWallet): Promise<string> {
  const { byReferenceQuery } = await world.issuer.createOffer({
    configurationIds: ['pid-sd-jwt'],
    grant: 'pre-authorized',
  });
  const interactionPath = await startIssuance(wallet, byReferenceQuery);
  const answer = await decideIssuance(wallet, interactionPath, { decision: 'approve' });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.received[0].credential_id as string;
}

for (const kind of DATABASE_KINDS) {
  describe(`erasing an account, on ${kind}`, () => {
    let world: IssuanceWorld;
    let second: FastifyInstance;
    let secondDatabase: DatabaseHandle;
    let tenantToken: string;
    before(async () => {
      world = await startIssuanceWorld(kind);
      // A second instance: its own process state, the same database, blocks and master key.
      const config = readConfig({ ...world.server.env, PORT: '0' });
      secondDatabase = openDatabase({
        databaseUrl: config.databaseUrl,
        dataDir: world.server.testDatabase.dataDir,
      });
      second = await buildApp({ config, database: secondDatabase, masterKey: world.server.masterKey });
      await second.ready();
      tenantToken = (await createApiToken(world.server.database.db, world.rp.clientId)).api_token;
    });
    after(async () => {
      await second?.close();
      await secondDatabase?.close();
      await world?.close();
    });

    test('DELETE /v1/user/{id}: nothing of the account is left in the database or the blocks, its tokens are refused on both instances, its issuer hears credential_deleted, its wallet address signs up again', async () => {
      const account = privateKeyToAccount(generatePrivateKey());
      const user = await logInUser(world.server, world.rp, account);
      const wallet: HostedWallet = { server: world.server, account, user, cookie: undefined };
      const credentialId = await receivePid(world, wallet);
      const accepted = world.issuer.events.notifications.at(-1)!;
      assert.equal(accepted.event, 'credential_accepted');

      const blocks = await blocksOfAccount(world.server, user.userId);
      assert.ok(blocks.length >= 2, 'a profile block and a credential block');
      const needles = [user.did, account.address.toLowerCase(), credentialId, ...blocks];
      // The scan can fail: before the erasure it finds every one of them.
      const before = await findAtRest(world.server, needles);
      for (const needle of [user.did, account.address.toLowerCase(), ...blocks])
        assert.ok(
          before.some((found) => found.startsWith(needle)),
          `${needle} is at rest before`,
        );
      for (const cid of blocks) assert.equal(existsSync(blockFile(world.server, cid)), true);

      const userinfo = { method: 'GET' as const, url: '/v2/openidc/user', headers: user.bearer };
      assert.equal((await second.inject(userinfo)).statusCode, 200);
      const other = await world.server.createMaster('Other tenant');
      const foreign = await world.server.request('DELETE', `/v1/user/${user.userId}`, {
        headers: { 'x-api-token': other.token },
      });
      assert.equal(foreign.status, 404, "another tenant's user is not found");

      const erased = await world.server.request('DELETE', `/v1/user/${user.userId}`, {
        headers: { 'x-api-token': tenantToken },
      });
      assert.equal(erased.status, 204, erased.text);

      assert.equal(
        (await world.server.request('GET', '/v2/openidc/user', { headers: user.bearer })).status,
        401,
      );
      assert.equal((await second.inject(userinfo)).statusCode, 401, 'refused at once on the other instance');
      const wallet2 = await fetch(`${world.server.url}/wallet`, {
        headers: { cookie: wallet.cookie!, accept: 'application/json' },
      });
      assert.equal(wallet2.status, 401, 'the wallet session ended');
      assert.deepEqual(world.issuer.events.notifications.at(-1), {
        notification_id: accepted.notification_id,
        event: 'credential_deleted',
      });

      assert.deepEqual(await findAtRest(world.server, needles), []);
      for (const cid of blocks)
        assert.equal(existsSync(blockFile(world.server, cid)), false, `${cid} removed`);

      const again = await world.server.request('DELETE', `/v1/user/${user.userId}`, {
        headers: { 'x-api-token': tenantToken },
      });
      assert.equal(again.status, 404);
      const signUp = await world.server.request('POST', '/v1/user/create', {
        headers: { 'x-api-token': tenantToken },
        body: { profile: minimalProfile(), wallet: { address: account.address, chain_id: '1' } },
      });
      assert.equal(signUp.status, 201, signUp.text);
    });

    test('the e-mail address signs up again; a master erases in its sub-client only with x-api-subclient-id', async () => {
      const master = await world.server.createMaster('Erasing master');
      const sub = await createClient(world.server.database.db, { name: 'Shop', parentId: master.clientId });
      const subId = String(sub.client_id);
      const profile = minimalProfile();
      const scoped = { 'x-api-token': master.token, 'x-api-subclient-id': subId };
      const created = await world.server.request('POST', '/v1/user/create', {
        headers: scoped,
        body: { profile },
      });
      assert.equal(created.status, 201, created.text);
      const userId = created.body.data.user_id;
      const duplicate = await world.server.request('POST', '/v1/user/create', {
        headers: scoped,
        body: { profile },
      });
      assert.equal(duplicate.status, 409);

      const unscoped = await world.server.request('DELETE', `/v1/user/${userId}`, {
        headers: { 'x-api-token': master.token },
      });
      assert.equal(unscoped.status, 404, "the master's own tenant has no such user");
      const emailIndex = createEmailIndex(world.server.masterKey)(profile.email_address);
      assert.ok((await findAtRest(world.server, [emailIndex])).length >= 1, 'the blind index is at rest');
      const erased = await world.server.request('DELETE', `/v1/user/${userId}`, { headers: scoped });
      assert.equal(erased.status, 204, erased.text);
      assert.deepEqual(await findAtRest(world.server, [emailIndex]), []);
      const recreated = await world.server.request('POST', '/v1/user/create', {
        headers: scoped,
        body: { profile },
      });
      assert.equal(recreated.status, 201, recreated.text);
      assert.notEqual(recreated.body.data.user_id, userId, 'a new account, never the old id');
    });

    test('bad requests are clear 4xx answers', async () => {
      const cases: Array<[string, Record<string, string>, number]> = [
        ['/v1/user/1', {}, 401],
        ['/v1/user/1', { 'x-api-token': 'cfr_at_not-a-token' }, 401],
        ['/v1/user/abc', { 'x-api-token': tenantToken }, 400],
        ['/v1/user/0', { 'x-api-token': tenantToken }, 400],
        ['/v1/user/99999999999', { 'x-api-token': tenantToken }, 400],
        ['/v1/user/2147483647', { 'x-api-token': tenantToken }, 404],
        ['/v1/user/1', { 'x-api-token': tenantToken, 'x-api-subclient-id': 'x' }, 400],
      ];
      for (const [url, headers, status] of cases) {
        const answer = await world.server.request('DELETE', url, { headers });
        assert.equal(answer.status, status, `${url} ${JSON.stringify(headers)}: ${answer.text}`);
        assert.equal(typeof answer.body.error, 'string');
        assert.equal(leaksInternals(answer.text), false);
      }
    });
  });
}
