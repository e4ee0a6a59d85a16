import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.ts';
import { createEncryptedStore } from '../../src/storage/index.ts';
import { profileContext } from '../../src/users/user-service.ts';
import { coffer } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { processEnv, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';
import {
  prepareStoreFixture,
  readBackThroughApi,
  startStoreBurst,
  storeOne,
} from '../helpers/store-burst.ts';
import { startKuboStandIn } from '../storage/kubo-stand-in.ts';

/**
 * Backups taken with `coffer backup` while a server process stores credentials, restored with
 * `coffer restore` into a fresh DATA_DIR and served by a fresh server process: every store the
 * server acknowledged before the backup began must be listed and presentable through the API.
 */
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function keySpellings(masterKeyBase64: string): Array<string | Buffer> {
  const key = Buffer.from(masterKeyBase64, 'base64');
  return [key, masterKeyBase64, key.toString('base64url'), key.toString('hex')];
}

describe('backup and restore on SQLite while the server stores', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test('a backup taken during a burst of stores restores every store acknowledged before it began', async () => {
    const database = await createTestDatabase('sqlite');
    cleanups.push(() => database.drop());
    const work = await mkdtemp(path.join(tmpdir(), 'coffer-backup-'));
    cleanups.push(() => rm(work, { recursive: true, force: true }));
    const env = await processEnv(database);
    let server: ServerProcess = await startServerProcess(env);
    cleanups.push(() => server.kill('SIGTERM'));
    const handle = openDatabase({ databaseUrl: undefined, dataDir: database.dataDir, poolSize: 2 });
    const fixture = await prepareStoreFixture(server.url, handle);
    const pending = await fixture.issue(40);

    const burst = startStoreBurst(server.url, fixture.token, pending, 6);
    while (burst.acknowledged.size < 10) await sleep(10);
    const acknowledgedBefore = new Map(burst.acknowledged);
    const usersBefore = new Map(burst.users);
    const out = path.join(work, 'coffer.backup');
    const backup = await coffer({ env }, 'backup', '--out', out, '--json');
    const acknowledgedDuring = burst.acknowledged.size - acknowledgedBefore.size;
    const usersDuring = burst.users.size - usersBefore.size;
    await burst.stop();
    await handle.close();
    await server.kill('SIGTERM');
    assert.equal(backup.code, 0, backup.stderr);
    assert.ok(usersDuring > 0, 'the burst went on while the backup ran');
    assert.deepEqual(burst.failures, []);
    const report = JSON.parse(backup.stdout);
    assert.equal(report.database, 'sqlite');
    assert.deepEqual(report.missing, []);
    assert.match(report.key_id, /^mk1-[0-9a-f]{16}$/);
    // The holder's profile, then each credential and its prepared statements.
    assert.ok(report.blocks >= 1 + 2 * acknowledgedBefore.size, `${report.blocks} blocks archived`);
    console.log(
      `backup during a burst: ${acknowledgedBefore.size} credentials and ${usersBefore.size} users acknowledged before it, ${acknowledgedDuring} and ${usersDuring} during it; ${report.blocks} blocks archived`,
    );

    const archive = await readFile(out);
    for (const needle of keySpellings(env['MASTER_KEY']!))
      assert.ok(!archive.includes(needle), 'the archive holds the master key');
    assert.equal(archive.subarray(0, 8).toString('latin1'), 'COFFERBK');

    // Refused: a DATA_DIR that is not empty (the original one), and another master key.
    const notEmpty = await coffer({ env }, 'restore', '--from', out, '--json');
    assert.equal(notEmpty.code, 1);
    assert.match(JSON.parse(notEmpty.stderr).error, /DATA_DIR .* is not empty/);
    const fresh = await mkdtemp(path.join(tmpdir(), 'coffer-restored-'));
    cleanups.push(() => rm(fresh, { recursive: true, force: true }));
    const otherKey = randomBytes(32).toString('base64');
    const wrongKey = await coffer(
      { env: { ...env, DATA_DIR: fresh, MASTER_KEY: otherKey } },
      'restore',
      '--from',
      out,
    );
    assert.equal(wrongKey.code, 1);
    assert.match(
      wrongKey.stderr,
      /taken under the master key with id mk1-\w+, but MASTER_KEY here has id mk1-\w+/,
    );
    assert.deepEqual(await readdir(fresh), [], 'a refused restore writes nothing');

    const restore = await coffer({ env: { ...env, DATA_DIR: fresh } }, 'restore', '--from', out, '--json');
    assert.equal(restore.code, 0, restore.stderr);
    const restored = JSON.parse(restore.stdout);
    assert.equal(restored.blocks, report.blocks);
    assert.equal(restored.database, 'sqlite');

    server = await startServerProcess({ ...env, DATA_DIR: fresh });
    const restoredHandle = openDatabase({ databaseUrl: undefined, dataDir: fresh, poolSize: 2 });
    cleanups.push(() => restoredHandle.close());
    // The restore is on the restored trail (issue #42), once, by the operator.
    const restores = await restoredHandle.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event_type', '=', 'restore')
      .execute();
    assert.deepEqual(
      restores.map((row) => [row.actor, row.client_id, JSON.parse(row.targets)]),
      [['cli', null, { blocks: report.blocks }]],
    );
    const readBack = await readBackThroughApi(server.url, fixture, restoredHandle, acknowledgedBefore.keys());
    for (const [id, { vc }] of acknowledgedBefore)
      assert.deepEqual(readBack.listed.get(id), vc, `acknowledged credential ${id} is not listed as stored`);
    assert.deepEqual(readBack.failed, []);
    assert.equal(readBack.presented.length, acknowledgedBefore.size);
    const store = createEncryptedStore({
      backend: 'fs',
      dataDir: fresh,
      masterKey: Buffer.from(env['MASTER_KEY']!, 'base64'),
    });
    for (const [userId, email] of usersBefore) {
      const row = await restoredHandle.db
        .selectFrom('users')
        .select(['did', 'profile_cid'])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      assert.ok(row, `acknowledged user ${userId} is not restored`);
      const profile = (await store.getEncrypted(row.profile_cid, profileContext(row.did))) as {
        email_address: string;
      };
      assert.equal(profile.email_address, email);
    }
    // The restored service takes new stores.
    const [another] = await fixture.issue(1);
    assert.equal((await storeOne(server.url, fixture.token, another!)).status, 201);
    await server.kill('SIGTERM');

    // With the key in DATA_DIR/master.key instead of MASTER_KEY: the file never goes into the
    // archive, and a restore accepts a DATA_DIR that holds only it.
    const { MASTER_KEY: masterKey, ...withoutKey } = env;
    await writeFile(path.join(database.dataDir, 'master.key'), `${masterKey}\n`, { mode: 0o600 });
    const fromFile = path.join(work, 'from-file.backup');
    const second = await coffer({ env: withoutKey }, 'backup', '--out', fromFile, '--json');
    assert.equal(second.code, 0, second.stderr);
    assert.equal(JSON.parse(second.stdout).key_id, report.key_id);
    const secondArchive = await readFile(fromFile);
    for (const needle of keySpellings(masterKey!)) assert.ok(!secondArchive.includes(needle));
    const again = await coffer({ env: withoutKey }, 'backup', '--out', fromFile);
    assert.equal(again.code, 1, 'a backup never overwrites a file');
    const keyOnly = await mkdtemp(path.join(tmpdir(), 'coffer-restored-'));
    cleanups.push(() => rm(keyOnly, { recursive: true, force: true }));
    await writeFile(path.join(keyOnly, 'master.key'), `${masterKey}\n`, { mode: 0o600 });
    const intoKeyOnly = await coffer(
      { env: { ...withoutKey, DATA_DIR: keyOnly } },
      'restore',
      '--from',
      fromFile,
    );
    assert.equal(intoKeyOnly.code, 0, intoKeyOnly.stderr);
    assert.deepEqual((await readdir(keyOnly)).sort(), ['blocks', 'coffer.sqlite', 'master.key']);
    const noKey = await mkdtemp(path.join(tmpdir(), 'coffer-restored-'));
    cleanups.push(() => rm(noKey, { recursive: true, force: true }));
    const withoutAnyKey = await coffer(
      { env: { ...withoutKey, DATA_DIR: noKey } },
      'restore',
      '--from',
      fromFile,
    );
    assert.equal(withoutAnyKey.code, 1);
    assert.match(withoutAnyKey.stderr, /No master key/);
    assert.deepEqual(await readdir(noKey), [], 'no key is generated for a restore');
  });

  test('with blocks in Kubo: the backup copies them and the restore puts them into another node', async () => {
    const source = await startKuboStandIn();
    cleanups.push(() => source.close());
    const target = await startKuboStandIn();
    cleanups.push(() => target.close());
    const database = await createTestDatabase('sqlite');
    cleanups.push(() => database.drop());
    const work = await mkdtemp(path.join(tmpdir(), 'coffer-backup-'));
    cleanups.push(() => rm(work, { recursive: true, force: true }));
    const env = await processEnv(database, { STORAGE: 'kubo', KUBO_API_URL: source.url });
    let server = await startServerProcess(env);
    cleanups.push(() => server.kill('SIGTERM'));
    const handle = openDatabase({ databaseUrl: undefined, dataDir: database.dataDir, poolSize: 2 });
    cleanups.push(() => handle.close());
    const fixture = await prepareStoreFixture(server.url, handle);
    const stored = new Map<string, unknown>();
    for (const vc of await fixture.issue(4)) {
      const result = await storeOne(server.url, fixture.token, vc);
      assert.equal(result.status, 201);
      stored.set(vc['id'] as string, result.stored);
    }
    const out = path.join(work, 'kubo.backup');
    const backup = await coffer({ env }, 'backup', '--out', out, '--json');
    assert.equal(backup.code, 0, backup.stderr);
    assert.equal(JSON.parse(backup.stdout).blocks, 1 + 2 * stored.size);
    await server.kill('SIGTERM');

    const fresh = await mkdtemp(path.join(tmpdir(), 'coffer-restored-'));
    cleanups.push(() => rm(fresh, { recursive: true, force: true }));
    const restoredEnv = { ...env, DATA_DIR: fresh, KUBO_API_URL: target.url };
    const restore = await coffer({ env: restoredEnv }, 'restore', '--from', out, '--json');
    assert.equal(restore.code, 0, restore.stderr);
    assert.deepEqual([...target.pins].sort(), [...source.pins].sort());
    server = await startServerProcess(restoredEnv);
    const restoredHandle = openDatabase({ databaseUrl: undefined, dataDir: fresh, poolSize: 2 });
    cleanups.push(() => restoredHandle.close());
    const readBack = await readBackThroughApi(server.url, fixture, restoredHandle, stored.keys());
    for (const [id, vc] of stored) assert.deepEqual(readBack.listed.get(id), vc);
    assert.deepEqual(readBack.failed, []);
    await server.kill('SIGTERM');
  });
});

const pgDumpMissing = spawnSync('pg_dump', ['--version']).status !== 0;
const skipPostgres = !process.env['TEST_DATABASE_URL']
  ? 'TEST_DATABASE_URL is not set'
  : pgDumpMissing
    ? 'pg_dump and pg_restore (the PostgreSQL client) are not installed'
    : false;

describe('backup on PostgreSQL: blocks only, beside pg_dump', { skip: skipPostgres }, () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test('the drill: pg_dump, then --blocks-only; pg_restore into a new database and restore into a fresh DATA_DIR; all is readable', async () => {
    const database = await createTestDatabase('postgres');
    cleanups.push(() => database.drop());
    const work = await mkdtemp(path.join(tmpdir(), 'coffer-backup-'));
    cleanups.push(() => rm(work, { recursive: true, force: true }));
    const env = await processEnv(database);
    let server = await startServerProcess(env);
    cleanups.push(() => server.kill('SIGTERM'));
    const handle = openDatabase({
      databaseUrl: database.databaseUrl,
      dataDir: database.dataDir,
      poolSize: 2,
    });
    cleanups.push(() => handle.close());
    const fixture = await prepareStoreFixture(server.url, handle);
    const stored = new Map<string, unknown>();
    for (const vc of await fixture.issue(5)) {
      const result = await storeOne(server.url, fixture.token, vc);
      assert.equal(result.status, 201);
      stored.set(vc['id'] as string, result.stored);
    }

    // As docs/operations.md says: the database first, then the blocks.
    const base = process.env['TEST_DATABASE_URL']!;
    const dump = path.join(work, 'coffer.pgdump');
    await run('pg_dump', ['--format=custom', `--schema=${database.schema}`, `--file=${dump}`, base]);
    const out = path.join(work, 'blocks.backup');
    const whole = await coffer({ env }, 'backup', '--out', out, '--json');
    assert.equal(whole.code, 2, 'PostgreSQL is backed up with pg_dump');
    assert.match(JSON.parse(whole.stderr).error, /pg_dump.*--blocks-only/);
    const backup = await coffer({ env }, 'backup', '--out', out, '--blocks-only', '--json');
    assert.equal(backup.code, 0, backup.stderr);
    const report = JSON.parse(backup.stdout);
    assert.equal(report.database, null);
    const blockFiles = (await readdir(path.join(database.dataDir, 'blocks'), { recursive: true })).filter(
      (name) => /\/bafy/.test(name),
    );
    assert.equal(report.blocks, blockFiles.length);
    for (const needle of keySpellings(env['MASTER_KEY']!)) assert.ok(!(await readFile(out)).includes(needle));
    await server.kill('SIGTERM');
    await handle.close();

    // Another database and another DATA_DIR.
    const drillDatabase = `coffer_drill_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`create database ${drillDatabase}`);
    await admin.end();
    cleanups.push(async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop database if exists ${drillDatabase} with (force)`);
      await client.end();
    });
    const drillUrl = new URL(database.databaseUrl!);
    drillUrl.pathname = `/${drillDatabase}`;
    const plainDrillUrl = new URL(base);
    plainDrillUrl.pathname = `/${drillDatabase}`;
    await run('pg_restore', ['--no-owner', `--dbname=${plainDrillUrl}`, dump]);
    const fresh = await mkdtemp(path.join(tmpdir(), 'coffer-restored-'));
    cleanups.push(() => rm(fresh, { recursive: true, force: true }));
    const restoredEnv = { ...env, DATA_DIR: fresh, DATABASE_URL: drillUrl.toString() };
    const restore = await coffer({ env: restoredEnv }, 'restore', '--from', out, '--json');
    assert.equal(restore.code, 0, restore.stderr);
    assert.equal(JSON.parse(restore.stdout).database, null);
    server = await startServerProcess(restoredEnv);
    const restoredHandle = openDatabase({ databaseUrl: drillUrl.toString(), dataDir: fresh, poolSize: 2 });
    cleanups.push(() => restoredHandle.close());
    const readBack = await readBackThroughApi(server.url, fixture, restoredHandle, stored.keys());
    for (const [id, vc] of stored) assert.deepEqual(readBack.listed.get(id), vc);
    assert.deepEqual(readBack.failed, []);
    await server.kill('SIGTERM');
  });
});
