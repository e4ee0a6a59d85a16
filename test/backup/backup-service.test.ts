import assert from 'node:assert/strict';
import { readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { createArchive, openArchive } from '../../src/backup/archive.ts';
import { type BackupDeps, takeBackup } from '../../src/backup/backup-service.ts';
import { restoreBackup } from '../../src/backup/restore-service.ts';
import { createClient } from '../../src/clients/client-admin.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import {
  type BlockBackend,
  createEncryptedStore,
  createEnvelopeCipher,
  createFsBackend,
} from '../../src/storage/index.ts';
import { MASTER_KEY, OTHER_MASTER_KEY, tempDir } from '../storage/helpers.ts';

const KEY_ID = createEnvelopeCipher(MASTER_KEY).kid;
const OWNER = { owner: 'did:key:z6MkBackup', kind: 'profile' };

/** A DATA_DIR with a SQLite database and fs blocks, and a way to add users whose profile is a block. */
async function dataDir(t: TestContext) {
  const dir = await tempDir(t);
  const database = openDatabase({ databaseUrl: undefined, dataDir: dir });
  t.after(() => database.close());
  await migrateToLatest(database.db, database.dialect);
  const { client_id: tenant } = await createClient(database.db, { name: 'Tenant', master: true });
  const store = createEncryptedStore({ backend: 'fs', dataDir: dir, masterKey: MASTER_KEY });
  let sequence = 0;
  const backend = createFsBackend(path.join(dir, 'blocks'));
  return {
    dir,
    database,
    store,
    backend,
    /** What `coffer backup` passes for this DATA_DIR. */
    backupDeps: (): BackupDeps => ({
      backend,
      linkTo: backend.linkTo,
      sqliteFile: path.join(dir, 'coffer.sqlite'),
      dataDir: dir,
      keyId: KEY_ID,
      now: () => new Date(),
    }),
    block: (value: unknown) => store.putEncrypted(value, OWNER),
    async addUser(profileCid: string) {
      sequence++;
      await database.db
        .insertInto('users')
        .values({
          tenant_id: tenant,
          profile_cid: profileCid,
          did: `did:key:z6MkUser${sequence}`,
          holder_key_sealed: 'sealed',
          created_at: new Date().toISOString(),
        })
        .execute();
    },
  };
}

const blockFile = (dir: string, cid: string) => path.join(dir, 'blocks', cid.slice(-3, -1), cid);

test('the archive holds the snapshot and exactly the blocks it names, including one deleted after staging and one written before the snapshot', async (t) => {
  const source = await dataDir(t);
  const kept = await source.block({ name: 'kept' });
  const deletedLater = await source.block({ name: 'deleted after staging' });
  const orphan = await source.block({ name: 'nobody names me' });
  await source.addUser(kept);
  await source.addUser(deletedLater);

  let writtenBetween = '';
  // Between the listing (staging) and the snapshot: a block is deleted from the store while its
  // row stays (a deletion whose row goes after the snapshot), and a new block and row arrive.
  const backend: BlockBackend = {
    ...source.backend,
    async *list() {
      yield* source.backend.list();
      await unlink(blockFile(source.dir, deletedLater));
      writtenBetween = await source.block({ name: 'written between' });
      await source.addUser(writtenBetween);
    },
  };
  const out = path.join(await tempDir(t), 'backup');
  const report = await takeBackup(
    {
      backend,
      linkTo: source.backend.linkTo,
      sqliteFile: path.join(source.dir, 'coffer.sqlite'),
      dataDir: source.dir,
      keyId: KEY_ID,
      now: () => new Date('2030-01-02T03:04:05Z'),
    },
    out,
  );
  assert.deepEqual(report.missing, []);
  assert.equal(report.blocks, 3);
  assert.deepEqual(
    (await readdir(source.dir)).filter((name) => name.startsWith('backup-staging')),
    [],
    'the staging directory is removed',
  );

  const archive = await openArchive(out);
  const names: string[] = [];
  for (let record = await archive.next(); record; record = await archive.next()) {
    names.push(`${record.kind} ${record.name}`);
    if (record.kind === 'M') {
      const manifest = JSON.parse((await archive.data()).toString());
      assert.equal(manifest.key_id, KEY_ID);
      assert.deepEqual(manifest.block_key_ids, [KEY_ID]);
      assert.equal(manifest.created_at, '2030-01-02T03:04:05.000Z');
    } else await archive.data();
  }
  await archive.close();
  assert.deepEqual(names, [
    'M manifest.json',
    ...[kept, deletedLater, writtenBetween].sort().map((cid) => `B ${cid}`),
    'D coffer.sqlite',
  ]);
  assert.ok(!names.includes(`B ${orphan}`), 'an orphan is not archived');

  const target = await tempDir(t);
  const restored = await restoreBackup(
    {
      dataDir: target,
      database: 'sqlite',
      stagesBlocks: true,
      blockBackend: (staging) => createFsBackend(path.join(staging, 'blocks')),
      keyId: KEY_ID,
    },
    out,
  );
  assert.equal(restored.blocks, 3);
  assert.deepEqual((await readdir(target)).sort(), ['blocks', 'coffer.sqlite']);
  const copy = openDatabase({ databaseUrl: undefined, dataDir: target });
  t.after(() => copy.close());
  const rows = await copy.db.selectFrom('users').select('profile_cid').execute();
  const store = createEncryptedStore({ backend: 'fs', dataDir: target, masterKey: MASTER_KEY });
  assert.equal(rows.length, 3);
  for (const row of rows) assert.ok(await store.getEncrypted(row.profile_cid, OWNER));
});

test('a referenced block already gone from the store is reported missing, and the rest is archived', async (t) => {
  const source = await dataDir(t);
  const present = await source.block({ name: 'present' });
  const lost = await source.block({ name: 'lost' });
  await source.addUser(present);
  await source.addUser(lost);
  await unlink(blockFile(source.dir, lost));
  const report = await takeBackup(source.backupDeps(), path.join(await tempDir(t), 'backup'));
  assert.deepEqual(report.missing, [lost]);
  assert.equal(report.blocks, 1);
});

test('a prepared-statements block lost or torn by an OS crash is a cache: left out without a warning', async (t) => {
  const source = await dataDir(t);
  await source.addUser(await source.block({ name: 'holder' }));
  const { user_id } = await source.database.db
    .selectFrom('users')
    .select('user_id')
    .executeTakeFirstOrThrow();
  const credential = async (id: string, cid: string, preparedCid: string) =>
    source.database.db
      .insertInto('credentials')
      .values({
        user_id,
        credential_id: id,
        cid,
        content_hash: id,
        issuer_client_id: 1,
        created_at: new Date().toISOString(),
        format: 'ldp_vc',
        prepared_cid: preparedCid,
      })
      .execute();
  const lostCredential = await source.block({ vc: 'lost' });
  const lostPrepared = await source.block({ prepared: 'lost' });
  const tornPrepared = await source.block({ prepared: 'torn' });
  await credential('urn:a', await source.block({ vc: 'kept' }), lostPrepared);
  await credential('urn:b', lostCredential, tornPrepared);
  await unlink(blockFile(source.dir, lostPrepared));
  await unlink(blockFile(source.dir, lostCredential));
  await writeFile(blockFile(source.dir, tornPrepared), 'torn');
  const report = await takeBackup(source.backupDeps(), path.join(await tempDir(t), 'backup'));
  assert.deepEqual(report.missing, [lostCredential], 'only the credential is a loss');
  assert.equal(report.blocks, 2, 'the profile and the kept credential');
});

test('a backup under another master key than the blocks’ is refused, and writes nothing', async (t) => {
  const source = await dataDir(t);
  await source.addUser(await source.block({ name: 'x' }));
  const out = path.join(await tempDir(t), 'backup');
  await assert.rejects(
    takeBackup(
      {
        backend: source.backend,
        linkTo: source.backend.linkTo,
        sqliteFile: path.join(source.dir, 'coffer.sqlite'),
        dataDir: source.dir,
        keyId: createEnvelopeCipher(OTHER_MASTER_KEY).kid,
        now: () => new Date(),
      },
      out,
    ),
    /encrypted under key mk1-\w+, which this configuration does not hold \(its keys: mk1-\w+\)/,
  );
  assert.deepEqual(await readdir(path.dirname(out)), []);
});

test('mid-rotation, blocks under the old and the new key back up with a ring that holds both', async (t) => {
  const source = await dataDir(t);
  await source.addUser(await source.block({ name: 'x' }));
  const out = path.join(await tempDir(t), 'backup');
  const deps = {
    backend: source.backend,
    linkTo: source.backend.linkTo,
    sqliteFile: path.join(source.dir, 'coffer.sqlite'),
    dataDir: source.dir,
    keyId: createEnvelopeCipher(OTHER_MASTER_KEY).kid,
    now: () => new Date(),
  };
  const report = await takeBackup({ ...deps, readableKeyIds: [deps.keyId, KEY_ID] }, out);
  assert.equal(report.key_id, deps.keyId, 'the current key');
  assert.equal(report.blocks, 1);
});

test('restore refuses damaged, truncated and foreign archives and leaves DATA_DIR empty', async (t) => {
  const source = await dataDir(t);
  for (let i = 0; i < 3; i++) await source.addUser(await source.block({ i }));
  const work = await tempDir(t);
  const out = path.join(work, 'backup');
  await takeBackup(
    {
      backend: source.backend,
      linkTo: source.backend.linkTo,
      sqliteFile: path.join(source.dir, 'coffer.sqlite'),
      dataDir: source.dir,
      keyId: KEY_ID,
      now: () => new Date(),
    },
    out,
  );
  const bytes = await readFile(out);
  const target = await tempDir(t);
  const restore = (file: string) =>
    restoreBackup(
      {
        dataDir: target,
        database: 'sqlite',
        stagesBlocks: true,
        blockBackend: (staging) => createFsBackend(path.join(staging, 'blocks')),
        keyId: KEY_ID,
      },
      file,
    );
  // A byte of a block's data (it no longer hashes to its CID), one of the database, and the end.
  const blockAt = bytes.indexOf(Buffer.from('B', 'latin1'), 10 + 3 + 13 + 8);
  const cases: Array<[string, Buffer, RegExp]> = [
    ['a flipped block byte', flip(bytes, blockAt + 200), /damaged|does not hash/],
    ['a flipped database byte', flip(bytes, bytes.length - 5000), /checksum does not match/],
    ['a truncated end', bytes.subarray(0, bytes.length - 10), /truncated/],
    ['half the file', bytes.subarray(0, bytes.length / 2), /truncated/],
    ['not a backup', Buffer.from('SQLite format 3\0 and so on'), /not a Coffer backup/],
    [
      'another version',
      Buffer.concat([bytes.subarray(0, 8), Buffer.from([0, 9]), bytes.subarray(10)]),
      /format 9/,
    ],
    ['trailing bytes', Buffer.concat([bytes, Buffer.from('x')]), /bytes follow its end/],
  ];
  for (const [name, damaged, message] of cases) {
    const file = path.join(work, name);
    await writeFile(file, damaged);
    await assert.rejects(restore(file), message, name);
    assert.deepEqual(await readdir(target), [], `${name}: DATA_DIR stays empty`);
  }
  await assert.rejects(restore(path.join(work, 'absent')), /cannot read/);
  // The intact archive restores.
  assert.equal((await restore(out)).blocks, 3);
  await assert.rejects(restore(out), /is not empty/);
});

function flip(bytes: Buffer, at: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[at]! ^= 0x01;
  return copy;
}

test('the archive format: records round-trip, a partial archive never appears under the name', async (t) => {
  const dir = await tempDir(t);
  const target = path.join(dir, 'a.backup');
  const writer = await createArchive(target);
  await writer.add('M', 'manifest.json', Buffer.from('{}'));
  await writer.add('B', 'name-é', new Uint8Array([1, 2, 3]));
  assert.deepEqual(
    (await readdir(dir)).filter((name) => name === 'a.backup'),
    [],
    'not there before it is finished',
  );
  await writer.finish();
  const reader = await openArchive(target);
  const first = await reader.next();
  assert.deepEqual(first, { kind: 'M', name: 'manifest.json', length: 2 });
  assert.equal((await reader.data()).toString(), '{}');
  assert.deepEqual(await reader.next(), { kind: 'B', name: 'name-é', length: 3 });
  assert.deepEqual([...(await reader.data())], [1, 2, 3]);
  assert.equal(await reader.next(), undefined);
  await reader.close();

  const aborted = await createArchive(path.join(dir, 'b.backup'));
  await aborted.add('M', 'manifest.json', Buffer.from('{}'));
  await aborted.abort();
  assert.deepEqual(await readdir(dir), ['a.backup'], 'an aborted archive leaves nothing');
  await rm(target);
});

test('a backup of a DATA_DIR without a database is refused and creates none', async (t) => {
  const dir = await tempDir(t);
  const sqliteFile = path.join(dir, 'coffer.sqlite');
  await assert.rejects(
    takeBackup(
      {
        backend: createFsBackend(path.join(dir, 'blocks')),
        sqliteFile,
        dataDir: dir,
        keyId: KEY_ID,
        now: () => new Date(),
      },
      path.join(dir, 'backup'),
    ),
    /There is no database at .*coffer\.sqlite: is DATA_DIR right\?/,
  );
  assert.deepEqual(await readdir(dir), []);
});
