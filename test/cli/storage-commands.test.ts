import assert from 'node:assert/strict';
import { readdir, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fastBbs } from '../../src/bbs/index.ts';
import { registerContext } from '../../src/formats/ldp-vc/contexts/context-admin.ts';
import { createEncryptedStore, type EncryptedStore } from '../../src/storage/index.ts';
import { profileContext } from '../../src/users/user-service.ts';
import { coffer } from '../helpers/cli.ts';
import { BENCH_CONTEXT, BENCH_CONTEXT_URL, createBenchIssuer } from '../helpers/credential-factory.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { type KuboStandIn, startKuboStandIn } from '../storage/kubo-stand-in.ts';

const OWNER = { owner: 'did:key:z6MkOrphan', kind: 'profile' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A user (profile block) and a stored bbs-2023 credential (credential and prepared blocks). */
async function rowsWithBlocks(server: TestServer): Promise<string[]> {
  const { token } = await server.createMaster();
  await registerContext(server.database.db, BENCH_CONTEXT_URL, JSON.stringify(BENCH_CONTEXT));
  const created = await server.request('POST', '/v1/user/create', {
    headers: { 'x-api-token': token },
    body: { profile: { email_address: 'gc@example.org', first_name: 'G', last_name: 'C' } },
  });
  assert.equal(created.status, 201, created.text);
  const user = await server.database.db
    .selectFrom('users')
    .select(['did', 'user_id', 'profile_cid'])
    .where('user_id', '=', created.body.data.user_id)
    .executeTakeFirstOrThrow();
  const vc = await (await createBenchIssuer(fastBbs)).issue(user.did, 3);
  const stored = await server.request('POST', '/v1/vc/issuer/store', {
    headers: { 'x-api-token': token },
    body: { vc },
  });
  assert.equal(stored.status, 201, stored.text);
  const credential = await server.database.db
    .selectFrom('credentials')
    .select(['cid', 'prepared_cid'])
    .where('user_id', '=', user.user_id)
    .executeTakeFirstOrThrow();
  assert.ok(credential.prepared_cid);
  return [user.profile_cid, credential.cid, credential.prepared_cid];
}

for (const kind of DATABASE_KINDS) {
  for (const backend of ['fs', 'kubo'] as const) {
    describe(`coffer storage gc on ${kind} with ${backend} blocks, while the server runs`, () => {
      let server: TestServer;
      let kubo: KuboStandIn | undefined;
      let store: EncryptedStore;
      before(async () => {
        kubo = backend === 'kubo' ? await startKuboStandIn() : undefined;
        server = await startTestServer(kind, kubo ? { STORAGE: 'kubo', KUBO_API_URL: kubo.url } : {});
        store = createEncryptedStore({
          backend,
          dataDir: server.testDatabase.dataDir,
          kuboApiUrl: kubo?.url,
          masterKey: server.masterKey,
        });
      });
      after(async () => {
        await server.close();
        await kubo?.close();
      });

      const gc = async (...args: string[]) => {
        const result = await coffer(server, 'storage', 'gc', ...args, '--json');
        assert.equal(result.code, 0, result.stderr);
        return JSON.parse(result.stdout);
      };
      const blockFiles = async () =>
        (await readdir(path.join(server.testDatabase.dataDir, 'blocks'), { recursive: true }))
          .filter((name) => /\/bafy/.test(name))
          .map((name) => path.join(server.testDatabase.dataDir, 'blocks', name));
      const present = async (cid: string) =>
        kubo ? kubo.pins.has(cid) : (await blockFiles()).some((file) => path.basename(file) === cid);

      test('removes the orphan older than the grace, reports its bytes, keeps every block a row names and the young orphan; --dry-run removes nothing', async () => {
        const referenced = await rowsWithBlocks(server);
        const oldOrphan = await store.putEncrypted({ orphan: 'old', padding: 'z'.repeat(500) }, OWNER);
        let youngOrphan: string;
        let grace: string;
        if (kubo) {
          // Kubo keeps no times: the first run sees the orphan, a run a grace period later removes it.
          const first = await gc('--grace', '1');
          assert.deepEqual([first.removed, first.young], [0, 1]);
          await sleep(1100);
          youngOrphan = await store.putEncrypted({ orphan: 'young' }, OWNER);
          grace = '1';
        } else {
          // Every block two hours old but the young orphan; the default grace is an hour.
          youngOrphan = await store.putEncrypted({ orphan: 'young' }, OWNER);
          const twoHoursAgo = new Date(Date.now() - 2 * 3600 * 1000);
          for (const file of await blockFiles())
            if (!file.endsWith(youngOrphan)) await utimes(file, twoHoursAgo, twoHoursAgo);
          grace = '3600';
        }
        const bytes = kubo
          ? kubo.blocks.get(oldOrphan)!.length
          : (await stat((await blockFiles()).find((file) => file.endsWith(oldOrphan))!)).size;

        const dry = await gc('--dry-run', ...(kubo ? ['--grace', grace] : []));
        assert.deepEqual([dry.removed, dry.bytes, dry.young, dry.dry_run], [1, bytes, 1, true]);
        for (const cid of [...referenced, oldOrphan, youngOrphan]) assert.ok(await present(cid), cid);

        const run = await gc(...(kubo ? ['--grace', grace] : []));
        assert.deepEqual([run.removed, run.bytes, run.young, run.dry_run], [1, bytes, 1, false]);
        assert.ok(!(await present(oldOrphan)), 'the old orphan is gone');
        for (const cid of [...referenced, youngOrphan]) assert.ok(await present(cid), cid);
        const profile = await server.database.db.selectFrom('users').select(['did', 'profile_cid']).execute();
        for (const row of profile)
          assert.ok(await store.getEncrypted(row.profile_cid, profileContext(row.did)));
        // The server still reads what it wrote.
        assert.equal((await gc('--grace', '3600')).removed, 0);
      });
    });
  }
}

describe('coffer storage gc, backup and restore: command lines that cannot be understood', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(() => server.close());

  test('exit with 2 and the usage, never a stack trace', async () => {
    // A few of each kind (every CLI run costs a process start of a second or two).
    const cases = [
      ['storage', 'frob'],
      ['storage', 'gc', '--grace', '-1'],
      ['storage', 'gc', '--grace', '1.5'],
      ['storage', 'gc', 'extra'],
      ['backup', '--out', path.join(server.testDatabase.dataDir, 'no-such-dir', 'x')],
      ['restore', '--from'],
    ];
    for (let i = 0; i < cases.length; i += 2) {
      const pair = cases.slice(i, i + 2);
      const results = await Promise.all(pair.map((args) => coffer(server, ...args)));
      for (const [j, result] of results.entries()) {
        const args = pair[j]!.join(' ');
        assert.equal(result.code, 2, `${args}: ${result.stderr}`);
        assert.match(result.stderr, /Usage: coffer/, args);
        assert.ok(!/\bat .+:\d+:\d+/.test(result.stderr), `${args} printed a stack trace`);
      }
    }
    const json = await coffer(server, 'backup', '--json');
    assert.equal(json.code, 2);
    assert.match(JSON.parse(json.stderr).error, /--out FILE is required/);
  });
});
