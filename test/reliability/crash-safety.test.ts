import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fastBbs } from '../../src/bbs/index.ts';
import { createClient } from '../../src/clients/client-admin.ts';
import { credentialContext } from '../../src/credentials/credential-service.ts';
import { openDatabase } from '../../src/db/database.ts';
import { registerContext } from '../../src/formats/ldp-vc/contexts/context-admin.ts';
import { parseCid, verifyBlock } from '../../src/storage/cid.ts';
import { createEncryptedStore } from '../../src/storage/index.ts';
import { profileContext } from '../../src/users/user-service.ts';
import { BENCH_CONTEXT, BENCH_CONTEXT_URL, createBenchIssuer } from '../helpers/credential-factory.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';
import { processEnv, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

/**
 * Crash safety (issue 7): bursts of user creates and credential stores against a server process
 * that is killed with SIGKILL mid-burst, then restarted on the same data. Every write the server
 * acknowledged (its user id, its CID) must be there and readable, and every block must match its
 * CID. CRASH_ROUNDS sets the number of kills per database (default 5).
 */
const ROUNDS = Number(process.env['CRASH_ROUNDS'] ?? '5');
const IN_FLIGHT = 12;
const CREDENTIALS_PER_ROUND = 60;

for (const kind of DATABASE_KINDS) {
  describe(`crash safety on ${kind}: SIGKILL mid-burst loses no acknowledged write`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test(`${ROUNDS} kills, every acknowledged user and credential readable after each restart`, async () => {
      const database = await createTestDatabase(kind);
      cleanups.push(() => database.drop());
      const env = await processEnv(database);
      let server: ServerProcess = await startServerProcess(env);
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

      const { api_token: token } = await createClient(handle.db, { name: 'Crash master', master: true });
      await registerContext(handle.db, BENCH_CONTEXT_URL, JSON.stringify(BENCH_CONTEXT));
      const holderResponse = await fetch(`${server.url}/v1/user/create`, {
        method: 'POST',
        headers: { 'x-api-token': token, 'content-type': 'application/json' },
        body: JSON.stringify({
          profile: { email_address: 'holder@crash.example', first_name: 'H', last_name: 'Older' },
        }),
      });
      const holderId = ((await holderResponse.json()) as { data: { user_id: number } }).data.user_id;
      const holder = await handle.db
        .selectFrom('users')
        .select(['did'])
        .where('user_id', '=', holderId)
        .executeTakeFirstOrThrow();
      const issuer = await createBenchIssuer(fastBbs);

      const users = new Map<number, string>();
      const credentials = new Map<string, string>();
      let sequence = 0;

      for (let round = 1; round <= ROUNDS; round++) {
        const pending = await Promise.all(
          Array.from({ length: CREDENTIALS_PER_ROUND }, () => issuer.issue(holder.did, 10)),
        );
        // The first store of a process starts its crypto worker threads; do it before the burst.
        const warm = pending.pop()!;
        const warmed = await fetch(`${server.url}/v1/vc/issuer/store`, {
          method: 'POST',
          headers: { 'x-api-token': token, 'content-type': 'application/json' },
          body: JSON.stringify({ vc: warm }),
        });
        assert.equal(warmed.status, 201, await warmed.clone().text());
        credentials.set(warm['id'] as string, ((await warmed.json()) as { data: { cid: string } }).data.cid);
        const before = users.size + credentials.size;
        const storedBefore = credentials.size;
        const url = server.url;
        const firstStore = Promise.withResolvers<void>();
        let crashed = false;
        // A burst: loops that keep IN_FLIGHT writes going until the server is gone.
        const loops = Array.from({ length: IN_FLIGHT }, async (_, lane) => {
          while (!crashed) {
            try {
              if (lane % 2 === 0 || pending.length === 0) {
                const email = `u${round}.${sequence++}@crash.example`;
                const r = await fetch(`${url}/v1/user/create`, {
                  method: 'POST',
                  headers: { 'x-api-token': token, 'content-type': 'application/json' },
                  body: JSON.stringify({
                    profile: { email_address: email, first_name: 'Crash', last_name: 'Test' },
                  }),
                });
                if (r.status === 201)
                  users.set(((await r.json()) as { data: { user_id: number } }).data.user_id, email);
              } else {
                const vc = pending.pop()!;
                const r = await fetch(`${url}/v1/vc/issuer/store`, {
                  method: 'POST',
                  headers: { 'x-api-token': token, 'content-type': 'application/json' },
                  body: JSON.stringify({ vc }),
                });
                if (r.status === 201) {
                  credentials.set(
                    vc['id'] as string,
                    ((await r.json()) as { data: { cid: string } }).data.cid,
                  );
                  firstStore.resolve();
                }
              }
            } catch {
              return; // the connection died with the server
            }
          }
        });
        // Kill at a random moment, but only once the burst has had a store acknowledged (under
        // load that can take a while) so that every round tests both kinds of write.
        // unref: the timer of the last round must not keep the test process alive.
        await Promise.race([firstStore.promise, new Promise((r) => setTimeout(r, 30_000).unref())]);
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 600)));
        await server.kill('SIGKILL');
        crashed = true;
        await Promise.all(loops);
        assert.ok(
          users.size + credentials.size > before,
          `round ${round}: the burst acknowledged nothing before the kill`,
        );
        assert.ok(
          credentials.size > storedBefore,
          `round ${round}: no credential store was acknowledged in the burst`,
        );

        server = await startServerProcess(env);

        for (const [userId, email] of users) {
          const row = await handle.db
            .selectFrom('users')
            .select(['profile_cid', 'did'])
            .where('user_id', '=', userId)
            .executeTakeFirst();
          assert.ok(row, `round ${round}: acknowledged user ${userId} is gone`);
          const profile = (await store.getEncrypted(row.profile_cid, profileContext(row.did))) as {
            email_address: string;
          };
          assert.equal(profile.email_address, email);
        }
        for (const [credentialId, cid] of credentials) {
          const row = await handle.db
            .selectFrom('credentials')
            .select(['cid'])
            .where('user_id', '=', holderId)
            .where('credential_id', '=', credentialId)
            .executeTakeFirst();
          assert.equal(row?.cid, cid, `round ${round}: acknowledged credential ${credentialId} is gone`);
          const vc = (await store.getEncrypted(cid, credentialContext(holder.did))) as { id: string };
          assert.equal(vc.id, credentialId);
        }
        const blocks = path.join(database.dataDir, 'blocks');
        for (const shard of await readdir(blocks)) {
          for (const name of await readdir(path.join(blocks, shard))) {
            if (name.startsWith('.')) continue; // a temporary file of an unfinished write: never a block
            await verifyBlock(parseCid(name), new Uint8Array(await readFile(path.join(blocks, shard, name))));
          }
        }
        const alive = await fetch(`${server.url}/v1/user/create`, {
          method: 'POST',
          headers: { 'x-api-token': token, 'content-type': 'application/json' },
          body: JSON.stringify({
            profile: { email_address: `after${round}@crash.example`, first_name: 'A', last_name: 'B' },
          }),
        });
        assert.equal(alive.status, 201, `round ${round}: the restarted server does not serve`);
      }
      console.log(
        `crash safety on ${kind}: ${ROUNDS} kills, ${users.size} users and ${credentials.size} credentials acknowledged, none lost`,
      );
    });
  });
}
