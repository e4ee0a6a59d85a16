import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import * as oidc from 'openid-client';
import { fastBbs } from '../../src/bbs/index.ts';
import { createClient } from '../../src/clients/client-admin.ts';
import { credentialContext, preparedContext } from '../../src/credentials/credential-service.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { registerContext } from '../../src/formats/ldp-vc/contexts/context-admin.ts';
import { createEmailIndex } from '../../src/keys/blind-index.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { masterKeyId } from '../../src/keys/master-key-ring.ts';
import { SEALED_COLUMNS } from '../../src/master-key/sealed-columns.ts';
import { createEncryptedStore } from '../../src/storage/index.ts';
import { profileContext } from '../../src/users/user-service.ts';
import { coffer } from '../helpers/cli.ts';
import { BENCH_CONTEXT, BENCH_CONTEXT_URL, createBenchIssuer } from '../helpers/credential-factory.ts';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/databases.ts';
import type { TestServer } from '../helpers/server.ts';
import { processEnv, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';
import {
  codeFromOutbox,
  postInteraction,
  type RelyingParty,
  registerRelyingParty,
  startLogin,
} from '../oidc/flow-helpers.ts';

/**
 * `coffer master-key rotate` (issue 33): real server processes and the real CLI. Data is written
 * under key A; the servers are restarted with B current and A previous; the rotation runs while a
 * server serves reads, is killed with SIGKILL mid-way and run again; afterwards a server with B
 * alone reads every profile, credential and sealed key, and a person logs in by e-mail (the blind
 * index) to the same account.
 */
const BIN = path.resolve(import.meta.dirname, '../../bin/coffer.js');
const USERS = 130;
const CREDENTIALS = 12;
const EMAIL = 'holder@rotation.example';

const b64 = (key: Buffer) => key.toString('base64');

interface World {
  database: TestDatabase;
  handle: DatabaseHandle;
  env: Record<string, string>;
  rp: RelyingParty;
  token: string;
  did: string;
  keyA: Buffer;
}

/** The test server shape the flow helpers read (url, data directory, database). */
const asServer = (world: World, url: string) =>
  ({ url, testDatabase: world.database, database: world.handle }) as unknown as TestServer;

/** An e-mail log-in at the relying party: the access token and the account's DID. */
async function logInByEmail(world: World, url: string): Promise<{ accessToken: string; did: string }> {
  const server = asServer(world, url);
  const started = await startLogin(server, world.rp);
  const sent = await postInteraction(server, started.interactionPath, 'login/email', { email: EMAIL });
  assert.equal(sent.status, 202);
  const code = await codeFromOutbox(server, EMAIL);
  const verified = await postInteraction(server, started.interactionPath, 'login/email/verify', { code });
  assert.equal(verified.status, 200, JSON.stringify(verified.body));
  const tokens = await oidc.authorizationCodeGrant(world.rp.config, new URL(verified.body.redirect_to), {
    pkceCodeVerifier: started.verifier,
    expectedNonce: started.nonce,
    expectedState: started.state,
  });
  return { accessToken: tokens.access_token, did: String(tokens.claims()!['did_wallet_address']) };
}

async function listCredentials(url: string, accessToken: string): Promise<number> {
  const response = await fetch(`${url}/v1/openidc/credentials`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return (JSON.parse(text) as { data: unknown[] }).data.length;
}

/** Users, credentials (with prepared statements), keys and settings, all written under key A. */
async function seed(kind: 'sqlite' | 'postgres', cleanups: Array<() => Promise<void>>): Promise<World> {
  const database = await createTestDatabase(kind);
  cleanups.push(() => database.drop());
  const env = await processEnv(database);
  const keyA = Buffer.from(env['MASTER_KEY']!, 'base64');
  const server = await startServerProcess(env);
  const handle = openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolSize: 2 });
  cleanups.push(() => handle.close());
  try {
    const master = await createClient(handle.db, { name: 'Rotation master', master: true });
    await registerContext(handle.db, BENCH_CONTEXT_URL, JSON.stringify(BENCH_CONTEXT));
    const world: World = {
      database,
      handle,
      env,
      keyA,
      token: master.api_token,
      did: '',
      rp: await registerRelyingParty(asServer({ database, handle } as World, server.url)),
    };
    const { did, accessToken } = await logInByEmail(world, server.url);
    world.did = did;
    await Promise.all(
      Array.from({ length: USERS }, async (_, i) => {
        const created = await fetch(`${server.url}/v1/user/create`, {
          method: 'POST',
          headers: { 'x-api-token': world.token, 'content-type': 'application/json' },
          body: JSON.stringify({
            profile: { email_address: `u${i}@rotation.example`, first_name: 'R', last_name: 'T' },
          }),
        });
        assert.equal(created.status, 201);
      }),
    );
    const issuer = await createBenchIssuer(fastBbs);
    const vcs = await Promise.all(Array.from({ length: CREDENTIALS }, () => issuer.issue(did, 3)));
    await Promise.all(
      vcs.map(async (vc) => {
        const stored = await fetch(`${server.url}/v1/vc/issuer/store`, {
          method: 'POST',
          headers: { 'x-api-token': world.token, 'content-type': 'application/json' },
          body: JSON.stringify({ vc }),
        });
        assert.equal(stored.status, 201, await stored.text());
      }),
    );
    assert.equal(await listCredentials(server.url, accessToken), CREDENTIALS);
    for (const args of [
      ['client', 'set', String(master.client_id), '--esp-token', 'esp-secret-1234'],
      ['issuer', 'enable', '--client', String(master.client_id)],
      ['verifier', 'enable', '--client', String(master.client_id)],
    ]) {
      const ran = await coffer({ env }, ...args, '--json');
      assert.equal(ran.code, 0, ran.stderr);
    }
    return world;
  } finally {
    await server.kill('SIGTERM');
  }
}

/** Every block a row names and every sealed value, opened with `key` alone. */
async function readAllWith(world: World, key: Buffer) {
  const store = createEncryptedStore({ backend: 'fs', dataDir: world.database.dataDir, masterKey: key });
  const cipher = createFieldCipher(key);
  const { db } = world.handle;
  const users = await db.selectFrom('users').select(['did', 'profile_cid']).execute();
  for (const user of users) await store.getEncrypted(user.profile_cid, profileContext(user.did));
  const credentials = await db
    .selectFrom('credentials as c')
    .innerJoin('users as u', 'u.user_id', 'c.user_id')
    .select(['c.cid', 'c.prepared_cid', 'u.did'])
    .execute();
  for (const c of credentials) {
    await store.getEncrypted(c.cid, credentialContext(c.did));
    if (c.prepared_cid) await store.getEncrypted(c.prepared_cid, preparedContext(c.did));
  }
  let sealed = 0;
  for (const column of SEALED_COLUMNS) {
    const extra = column.extra.length ? sql`, ${sql.raw(column.extra.join(', '))}` : sql``;
    const rows = await sql<
      Record<string, unknown>
    >`select t.${sql.ref(column.key)} as k, t.${sql.ref(column.column)} as v ${extra}
      from ${sql.table(column.table)} t ${sql.raw(column.joins ?? '')} where t.${sql.ref(column.column)} is not null`.execute(
      db,
    );
    for (const row of rows.rows) {
      const value = String(row['v']);
      assert.ok(
        value.startsWith(`v2.${masterKeyId(key)}.`),
        `${column.table}.${column.column} under another key`,
      );
      cipher.decrypt(value, column.aad(row));
      sealed++;
    }
  }
  return { users: users.length, credentials: credentials.length, sealed };
}

/** The CLI as an operator runs it, in its own process: kill it when `killWhen` matches stderr. */
function rotate(env: Record<string, string>, args: string[], killWhen?: RegExp) {
  const child = spawn(process.execPath, [BIN, 'master-key', 'rotate', ...args, '--json'], {
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    if (killWhen?.test(stderr) && child.exitCode === null) child.kill('SIGKILL');
  });
  return new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>(
    (resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

async function blockFiles(dataDir: string): Promise<string[]> {
  const entries = await readdir(path.join(dataDir, 'blocks'), { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => e.name)
    .sort();
}

const blockFile = (dataDir: string, cid: string) => path.join(dataDir, 'blocks', cid.slice(-3, -1), cid);

async function snapshot(world: World) {
  const { db } = world.handle;
  return JSON.stringify({
    users: await db.selectFrom('users').selectAll().orderBy('user_id').execute(),
    credentials: await db.selectFrom('credentials').selectAll().orderBy('credential_pk').execute(),
    keys: await db.selectFrom('signing_keys').selectAll().orderBy('kid').execute(),
    issuers: await db.selectFrom('issuers').selectAll().execute(),
    blocks: await blockFiles(world.database.dataDir),
  });
}

for (const kind of DATABASE_KINDS) {
  describe(`master-key rotation on ${kind}`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('dry run, SIGKILL mid-way, resumed while a server reads; then B alone reads everything', async () => {
      const world = await seed(kind, cleanups);
      const keyB = randomBytes(32);
      const keyFile = path.join(world.database.dataDir, '..', `new-${randomBytes(4).toString('hex')}.key`);
      await writeFile(keyFile, `${b64(keyB)}\n`, { mode: 0o600 });
      cleanups.push(() => rm(keyFile, { force: true }));
      const rotating = { ...world.env, MASTER_KEY: b64(keyB), MASTER_KEY_PREVIOUS: b64(world.keyA) };

      // Prepared blocks are written without fsync: an OS crash may have lost one or torn another.
      // The rotation forgets both rather than fail on them (a dry run only counts).
      const caches = await world.handle.db
        .selectFrom('credentials')
        .select(['credential_pk', 'prepared_cid'])
        .where('prepared_cid', 'is not', null)
        .orderBy('credential_pk')
        .limit(2)
        .execute();
      assert.equal(caches.length, 2);
      const [lost, torn] = caches.map((row) => blockFile(world.database.dataDir, row.prepared_cid!));
      await rm(lost!);
      await writeFile(torn!, (await readFile(torn!)).subarray(0, 40));

      // --dry-run counts and writes nothing.
      const before = await snapshot(world);
      const dry = await rotate(rotating, ['--new-key-file', keyFile, '--dry-run']);
      assert.equal(dry.code, 0, dry.stderr);
      const counted = JSON.parse(dry.stdout);
      assert.equal(counted.dry_run, true);
      assert.equal(counted.blocks.by_kind.profile.remaining, USERS + 1);
      assert.equal(counted.blocks.by_kind.credential.remaining, CREDENTIALS);
      assert.equal(counted.hashes.by_column['users.email_index'].remaining, USERS + 1);
      assert.ok(counted.fields.remaining >= USERS + 1 + 4, JSON.stringify(counted.fields));
      assert.equal(await snapshot(world), before);

      // The server runs with B current and A previous, and keeps answering during the rotation.
      const server: ServerProcess = await startServerProcess(rotating);
      cleanups.push(() => server.kill('SIGTERM'));
      const { accessToken } = await logInByEmail(world, server.url);
      let reading = true;
      let reads = 0;
      const reader = (async () => {
        while (reading) {
          assert.equal(await listCredentials(server.url, accessToken), CREDENTIALS);
          reads++;
        }
      })();

      const killed = await rotate(rotating, ['--new-key-file', keyFile], /profiles: 100 checked/);
      assert.equal(killed.signal, 'SIGKILL');
      const midway = JSON.parse((await rotate(rotating, ['--new-key-file', keyFile, '--dry-run'])).stdout);
      assert.ok(midway.blocks.by_kind.profile.remaining > 0, 'the kill landed before the end');
      assert.ok(midway.blocks.by_kind.profile.remaining < USERS + 1, 'the kill landed after a batch');

      const resumed = await rotate(rotating, ['--new-key-file', keyFile]);
      assert.equal(resumed.code, 0, resumed.stderr);
      const done = JSON.parse(resumed.stdout);
      assert.equal(done.failed, 0, JSON.stringify(done.failures));
      assert.equal(done.remaining, 0, JSON.stringify(done));
      assert.equal(done.blocks.by_kind.credential.reencrypted, CREDENTIALS);
      assert.equal(done.blocks.by_kind['credential-prepared'].reencrypted, CREDENTIALS - 2);
      const forgotten = await world.handle.db
        .selectFrom('credentials')
        .select('prepared_cid')
        .where(
          'credential_pk',
          'in',
          caches.map((row) => row.credential_pk),
        )
        .execute();
      assert.deepEqual(forgotten, [{ prepared_cid: null }, { prepared_cid: null }]);
      assert.ok(done.old_blocks_removed >= done.blocks.reencrypted);
      reading = false;
      await reader;
      assert.ok(reads > 0);
      const check = JSON.parse((await rotate(rotating, ['--new-key-file', keyFile, '--dry-run'])).stdout);
      assert.equal(check.remaining, 0);
      await server.kill('SIGTERM');

      // A alone is no longer needed: a server with B alone reads and logs the person in.
      const alone = { ...world.env, MASTER_KEY: b64(keyB) };
      const counts = await readAllWith(world, keyB);
      assert.equal(counts.users, USERS + 1);
      assert.equal(counts.credentials, CREDENTIALS);
      const onlyB = await startServerProcess(alone);
      cleanups.push(() => onlyB.kill('SIGTERM'));
      const again = await logInByEmail(world, onlyB.url);
      assert.equal(again.did, world.did, 'the e-mail finds the same account (blind index under B)');
      assert.equal(await listCredentials(onlyB.url, again.accessToken), CREDENTIALS);
      const duplicate = await fetch(`${onlyB.url}/v1/user/create`, {
        method: 'POST',
        headers: { 'x-api-token': world.token, 'content-type': 'application/json' },
        body: JSON.stringify({
          profile: { email_address: 'u7@rotation.example', first_name: 'R', last_name: 'T' },
        }),
      });
      assert.equal(duplicate.status, 409);
      await onlyB.kill('SIGTERM');
    });
  });
}

describe('master-key rotate refuses what it cannot do', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test('a missing or malformed key file, or a configuration that does not name the new key', async () => {
    const database = await createTestDatabase('sqlite');
    cleanups.push(() => database.drop());
    const env = await processEnv(database);
    const file = path.join(database.dataDir, 'new.key');
    const missing = await coffer({ env }, 'master-key', 'rotate', '--new-key-file', file, '--json');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot be read/);
    await writeFile(file, 'not a key\n');
    const malformed = await coffer({ env }, 'master-key', 'rotate', '--new-key-file', file);
    assert.equal(malformed.code, 2);
    assert.match(malformed.stderr, /must hold one key of 32 bytes in base64/);
    const none = await coffer({ env }, 'master-key', 'rotate');
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--new-key-file is required/);
    await writeFile(file, `${b64(randomBytes(32))}\n`);
    const notCurrent = await coffer({ env }, 'master-key', 'rotate', '--new-key-file', file, '--json');
    assert.equal(notCurrent.code, 1);
    assert.match(notCurrent.stderr, /MASTER_KEY is not the key in --new-key-file/);
    await writeFile(file, `${env['MASTER_KEY']}\n`);
    const nothingToReadWith = await coffer({ env }, 'master-key', 'rotate', '--new-key-file', file);
    assert.equal(nothingToReadWith.code, 1);
    assert.match(nothingToReadWith.stderr, /no previous key is configured/);
  });

  test('embedded default: a first run installs the new key, a restart, a second run re-encrypts', async () => {
    const database = await createTestDatabase('sqlite');
    cleanups.push(() => database.drop());
    const { MASTER_KEY: _, ...env } = await processEnv(database);
    let server = await startServerProcess(env);
    cleanups.push(() => server.kill('SIGTERM'));
    const keyFile = path.join(database.dataDir, 'master.key');
    const keyA = (await readFile(keyFile, 'utf8')).trim();
    const handle = openDatabase({ databaseUrl: undefined, dataDir: database.dataDir, poolSize: 1 });
    cleanups.push(() => handle.close());
    const master = await createClient(handle.db, { name: 'Embedded', master: true });
    const create = (email: string) =>
      fetch(`${server.url}/v1/user/create`, {
        method: 'POST',
        headers: { 'x-api-token': master.api_token, 'content-type': 'application/json' },
        body: JSON.stringify({ profile: { email_address: email, first_name: 'E', last_name: 'T' } }),
      });
    assert.equal((await create('one@embedded.example')).status, 201);
    const admin = await coffer(
      { env },
      'admin',
      'add',
      '--client',
      String(master.client_id),
      '--email',
      'one@embedded.example',
      '--role',
      'owner',
    );
    assert.equal(admin.code, 0, admin.stderr);

    const keyB = randomBytes(32);
    const newKey = path.join(database.dataDir, 'incoming.key');
    await writeFile(newKey, `${b64(keyB)}\n`);
    const first = await coffer({ env }, 'master-key', 'rotate', '--new-key-file', newKey, '--json');
    assert.equal(first.code, 0, first.stderr);
    assert.equal(JSON.parse(first.stdout).restart, true);
    assert.equal((await readFile(keyFile, 'utf8')).trim(), b64(keyB));
    assert.equal((await readFile(path.join(database.dataDir, 'master.key.previous'), 'utf8')).trim(), keyA);
    assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
    // Nothing was rewritten: the server, still on A, goes on finding e-mails and writing.
    assert.equal((await create('one@embedded.example')).status, 409);
    assert.equal((await create('two@embedded.example')).status, 201);

    await server.kill('SIGTERM');
    server = await startServerProcess(env);
    const second = await coffer({ env }, 'master-key', 'rotate', '--new-key-file', newKey, '--json');
    assert.equal(second.code, 0, second.stderr);
    const report = JSON.parse(second.stdout);
    assert.equal(report.remaining, 0, JSON.stringify(report));
    assert.equal(report.blocks.by_kind.profile.reencrypted, 2);
    // The finished rotation is on the audit trail (issue #42): the operator, service-wide, ids only.
    const rotations = await handle.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event_type', '=', 'master_key.rotate')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      [rotations.at(-1)?.actor, rotations.at(-1)?.client_id, JSON.parse(rotations.at(-1)!.targets)],
      ['cli', null, { kid: report.kid, failed: 0, remaining: 0 }],
    );
    assert.ok(!rotations.some((row) => row.targets.includes(b64(keyB))), 'never the key');
    assert.equal((await create('one@embedded.example')).status, 409, 'found under the new index too');
    const indexes = await handle.db
      .selectFrom('console_admins')
      .innerJoin('users', 'users.tenant_id', 'console_admins.client_id')
      .select(['console_admins.email_index as admin', 'users.email_index as user'])
      .where('users.email_index', '=', createEmailIndex(keyB)('one@embedded.example'))
      .execute();
    assert.deepEqual(
      indexes.map((i) => i.admin),
      [indexes[0]?.user],
      'the administrator moved with the account',
    );
    await rm(path.join(database.dataDir, 'master.key.previous'));
    await server.kill('SIGTERM');
    server = await startServerProcess(env);
    assert.equal((await create('two@embedded.example')).status, 409);
    assert.equal((await create('three@embedded.example')).status, 201);
  });
});
