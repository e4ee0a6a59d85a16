import assert from 'node:assert/strict';
import { readdir, utimes } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { credentialContext } from '../../src/credentials/credential-service.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createEncryptedStore } from '../../src/storage/index.ts';
import { profileContext } from '../../src/users/user-service.ts';
import { coffer } from '../helpers/cli.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';
import { processEnv, startServerProcess } from '../helpers/server-process.ts';
import { prepareStoreFixture, readBackThroughApi, startStoreBurst } from '../helpers/store-burst.ts';

/**
 * `coffer storage gc` run again and again, with a short grace period, beside a server process
 * that stores credentials and creates users as fast as it can: orphans made beforehand go, and
 * every write the server acknowledged stays readable (through the API, and block by block).
 */
const GRACE_SECONDS = '2';
const RUNS = 3;

for (const kind of DATABASE_KINDS) {
  describe(`storage collection on ${kind} beside a server that is writing`, () => {
    const cleanups: Array<() => Promise<unknown>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test(`${RUNS} collections during a burst lose no referenced block`, async () => {
      const database = await createTestDatabase(kind);
      cleanups.push(() => database.drop());
      const env = await processEnv(database);
      const server = await startServerProcess(env);
      cleanups.push(() => server.kill('SIGTERM'));
      const handle = openDatabase({
        databaseUrl: database.databaseUrl,
        dataDir: database.dataDir,
        poolSize: 2,
      });
      cleanups.push(() => handle.close());
      const store = createEncryptedStore({
        backend: 'fs',
        dataDir: database.dataDir,
        masterKey: Buffer.from(env['MASTER_KEY']!, 'base64'),
      });
      const fixture = await prepareStoreFixture(server.url, handle);
      const pending = await fixture.issue(30);

      // Orphans as a crash between a block and its row leaves them, an hour old.
      const orphans: string[] = [];
      for (let i = 0; i < 5; i++)
        orphans.push(await store.putEncrypted({ orphan: i }, { owner: 'x', kind: 'y' }));
      const anHourAgo = new Date(Date.now() - 3600 * 1000);
      const fileOf = (cid: string) => path.join(database.dataDir, 'blocks', cid.slice(-3, -1), cid);
      for (const cid of orphans) await utimes(fileOf(cid), anHourAgo, anHourAgo);

      const burst = startStoreBurst(server.url, fixture.token, pending, 6);
      let removed = 0;
      for (let run = 0; run < RUNS; run++) {
        const result = await coffer({ env }, 'storage', 'gc', '--grace', GRACE_SECONDS, '--json');
        assert.equal(result.code, 0, result.stderr);
        removed += JSON.parse(result.stdout).removed;
      }
      await burst.stop();
      assert.deepEqual(burst.failures, []);
      assert.ok(burst.acknowledged.size > 0 && burst.users.size > 0, 'the burst wrote');
      assert.ok(removed >= orphans.length, `the orphans were collected (${removed} removed)`);
      const present = new Set(
        (await readdir(path.join(database.dataDir, 'blocks'), { recursive: true })).map((name) =>
          path.basename(name),
        ),
      );
      for (const cid of orphans) assert.ok(!present.has(cid), `orphan ${cid} is still there`);

      const readBack = await readBackThroughApi(server.url, fixture, handle, burst.acknowledged.keys());
      for (const [id, { vc }] of burst.acknowledged) assert.deepEqual(readBack.listed.get(id), vc, id);
      assert.deepEqual(readBack.failed, []);
      for (const [userId, email] of burst.users) {
        const row = await handle.db
          .selectFrom('users')
          .select(['did', 'profile_cid'])
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow();
        const profile = (await store.getEncrypted(row.profile_cid, profileContext(row.did))) as {
          email_address: string;
        };
        assert.equal(profile.email_address, email);
      }
      // Every block any row names is there, the prepared statements too.
      const rows = await handle.db.selectFrom('credentials').select(['cid', 'prepared_cid']).execute();
      for (const row of rows) {
        assert.ok(present.has(row.cid), `credential block ${row.cid} is gone`);
        if (row.prepared_cid)
          assert.ok(present.has(row.prepared_cid), `prepared block ${row.prepared_cid} is gone`);
      }
      await store.getEncrypted(rows[0]!.cid, credentialContext(fixture.holder.did));
      console.log(
        `gc on ${kind} during a burst: ${removed} blocks removed in ${RUNS} runs; ${burst.acknowledged.size} credentials and ${burst.users.size} users acknowledged, none lost`,
      );
    });
  });
}
