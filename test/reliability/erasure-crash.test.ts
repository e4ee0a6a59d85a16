import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createApiToken } from '../../src/clients/client-admin.ts';
import { openDatabase } from '../../src/db/database.ts';
import { coffer } from '../helpers/cli.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';
import { processEnv, startServerProcess } from '../helpers/server-process.ts';
import { prepareStoreFixture, storeOne } from '../helpers/store-burst.ts';
import { startKuboStandIn } from '../storage/kubo-stand-in.ts';
import { minimalProfile } from '../users/helpers.ts';

/**
 * An erasure commits the rows and then removes the blocks (src/accounts/account-erasure.ts). A
 * SIGKILL in between must leave nothing a row names missing, and only blocks that
 * `coffer storage gc` collects. The Kubo stand-in holds the block removals unanswered, so the
 * process is killed exactly there.
 */
for (const kind of DATABASE_KINDS) {
  describe(`an erasure killed between its rows and its blocks, on ${kind}`, () => {
    const cleanups: Array<() => Promise<unknown>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    });

    test('the account is gone, its blocks are orphans, and coffer storage gc removes exactly those', async () => {
      const kubo = await startKuboStandIn();
      cleanups.push(() => kubo.close());
      const database = await createTestDatabase(kind);
      cleanups.push(() => database.drop());
      const env = await processEnv(database, { STORAGE: 'kubo', KUBO_API_URL: kubo.url });
      let server = await startServerProcess(env);
      cleanups.push(() => server.kill('SIGTERM'));
      const handle = openDatabase({
        databaseUrl: database.databaseUrl,
        dataDir: database.dataDir,
        poolSize: 2,
      });
      cleanups.push(() => handle.close());

      const fixture = await prepareStoreFixture(server.url, handle);
      for (const vc of await fixture.issue(2))
        assert.equal((await storeOne(server.url, fixture.token, vc)).status, 201);
      const bystander = await fetch(`${server.url}/v1/user/create`, {
        method: 'POST',
        headers: { 'x-api-token': fixture.token, 'content-type': 'application/json' },
        body: JSON.stringify({ profile: minimalProfile() }),
      });
      assert.equal(bystander.status, 201);
      const userId = fixture.holder.userId;
      const user = await handle.db
        .selectFrom('users')
        .select('profile_cid')
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow();
      const credentials = await handle.db
        .selectFrom('credentials')
        .select(['cid', 'prepared_cid'])
        .where('user_id', '=', userId)
        .execute();
      const accountBlocks = [
        user.profile_cid,
        ...credentials.flatMap((c) => [c.cid, ...(c.prepared_cid ? [c.prepared_cid] : [])]),
      ];
      assert.equal(credentials.length, 2);
      const othersBlocks = [...kubo.pins].filter((cid) => !accountBlocks.includes(cid));
      assert.ok(othersBlocks.length >= 1, "the bystander's profile");
      for (const cid of accountBlocks) assert.ok(kubo.pins.has(cid));

      kubo.faults.holdPinRemovals = true;
      const { api_token: tenantToken } = await createApiToken(handle.db, fixture.rp.clientId);
      const erasure = fetch(`${server.url}/v1/user/${userId}`, {
        method: 'DELETE',
        headers: { 'x-api-token': tenantToken },
      }).catch((error: Error) => error);
      const deadline = Date.now() + 10_000;
      while (!kubo.requests.some((r) => r.path === '/api/v0/pin/rm')) {
        assert.ok(Date.now() < deadline, 'the erasure reached the blocks');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await server.kill('SIGKILL');
      assert.ok((await erasure) instanceof Error, 'the erasure was never answered');

      const left = await handle.db
        .selectFrom('users')
        .select('user_id')
        .where('user_id', '=', userId)
        .executeTakeFirst();
      assert.equal(left, undefined, 'the rows were committed before the kill');
      const rowsLeft = await handle.db
        .selectFrom('credentials')
        .select('cid')
        .where('user_id', '=', userId)
        .execute();
      assert.deepEqual(rowsLeft, []);
      for (const cid of accountBlocks) assert.ok(kubo.pins.has(cid), `${cid} is an orphan, still pinned`);

      kubo.faults.holdPinRemovals = false;
      // On Kubo an orphan is removed by the first run that finds it unreferenced a grace after an
      // earlier run saw it (docs/operations.md, Storage collection): two runs with no grace.
      let removed = 0;
      for (let run = 0; run < 2; run++) {
        const gc = await coffer({ env }, 'storage', 'gc', '--grace', '0', '--json');
        assert.equal(gc.code, 0, gc.stderr);
        removed += JSON.parse(gc.stdout).removed;
      }
      assert.equal(removed, accountBlocks.length);
      for (const cid of accountBlocks) assert.equal(kubo.pins.has(cid), false, `${cid} collected`);
      for (const cid of othersBlocks) assert.ok(kubo.pins.has(cid), 'what rows name stays');

      server = await startServerProcess(env);
      const again = await fetch(`${server.url}/v1/user/${userId}`, {
        method: 'DELETE',
        headers: { 'x-api-token': tenantToken },
      });
      assert.equal(again.status, 404, 'after the restart the account is simply gone');
    });
  });
}
