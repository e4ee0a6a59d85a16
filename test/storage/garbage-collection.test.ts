import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdir, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, type TestContext, test } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { unreferencedBlockSightings } from '../../src/db/unreferenced-blocks.ts';
import {
  type BlockBackend,
  collectGarbage,
  createContentStore,
  createEncryptedStore,
  createFsBackend,
  createKuboBackend,
  parseCid,
} from '../../src/storage/index.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';
import { MASTER_KEY, tempDir } from './helpers.ts';
import { startKuboStandIn } from './kubo-stand-in.ts';

const OWNER = { owner: 'did:key:z6MkCollect', kind: 'profile' };
const HOUR = 3600;
const hoursAgo = (hours: number) => new Date(Date.now() - hours * HOUR * 1000);

async function fsStore(t: TestContext) {
  const dir = await tempDir(t);
  const store = createEncryptedStore({ backend: 'fs', dataDir: dir, masterKey: MASTER_KEY });
  const backend = createFsBackend(path.join(dir, 'blocks'));
  const fileOf = (cid: string) => path.join(dir, 'blocks', cid.slice(-3, -1), cid);
  return {
    dir,
    backend,
    fileOf,
    put: (value: unknown) => store.putEncrypted(value, OWNER),
    age: (cid: string, hours: number) => utimes(fileOf(cid), hoursAgo(hours), hoursAgo(hours)),
    exists: (cid: string) =>
      stat(fileOf(cid)).then(
        () => true,
        () => false,
      ),
  };
}

describe('storage collection on the fs backend', () => {
  test('removes an orphan older than the grace and reports its bytes; keeps referenced blocks, young orphans and blocks that are not envelopes; a dry run removes nothing', async (t) => {
    const fs = await fsStore(t);
    const referenced = await fs.put({ kept: true });
    const oldOrphan = await fs.put({ orphan: 'old', padding: 'x'.repeat(300) });
    const youngOrphan = await fs.put({ orphan: 'young' });
    const foreign = (await createContentStore(fs.backend).put({ not: 'an envelope' })).toString();
    for (const cid of [referenced, oldOrphan, foreign]) await fs.age(cid, 2);
    // A temporary file a crash left behind two hours ago, and one of a write in flight.
    const staleTemp = path.join(fs.dir, 'blocks', 'aa', `.bafyreistale.${randomUUID()}.tmp`);
    const freshTemp = path.join(fs.dir, 'blocks', 'aa', `.bafyreifresh.${randomUUID()}.tmp`);
    await writeFile(staleTemp, 'half a block');
    await writeFile(freshTemp, 'a block being written');
    await utimes(staleTemp, hoursAgo(2), hoursAgo(2));
    const oldBytes = (await stat(fs.fileOf(oldOrphan))).size;

    const deps = {
      backend: fs.backend,
      referencedCids: async () => new Set([referenced]),
      now: () => new Date(),
      temporaries: { list: fs.backend.temporaries, remove: fs.backend.removeTemporary },
    };
    const expected = {
      removed: 1,
      bytes: oldBytes,
      young: 1,
      foreign: 1,
      temporary_files: 1,
      temporary_bytes: 'half a block'.length,
    };
    assert.deepEqual(await collectGarbage(deps, { graceSeconds: HOUR, dryRun: true }), expected);
    for (const cid of [referenced, oldOrphan, youngOrphan, foreign]) assert.ok(await fs.exists(cid));
    assert.equal((await readdir(path.join(fs.dir, 'blocks', 'aa'))).length, 2, 'a dry run removes no file');

    assert.deepEqual(await collectGarbage(deps, { graceSeconds: HOUR, dryRun: false }), expected);
    assert.ok(!(await fs.exists(oldOrphan)), 'the old orphan is removed');
    for (const cid of [referenced, youngOrphan, foreign]) assert.ok(await fs.exists(cid), cid);
    assert.deepEqual(await readdir(path.join(fs.dir, 'blocks', 'aa')), [path.basename(freshTemp)]);

    // Nothing left to collect; with a grace of 0 the young orphan goes too.
    assert.equal((await collectGarbage(deps, { graceSeconds: HOUR, dryRun: false })).removed, 0);
    assert.equal((await collectGarbage(deps, { graceSeconds: 0, dryRun: false })).removed, 1);
    assert.ok(!(await fs.exists(youngOrphan)));
  });

  test('the blocks are listed before the referenced CIDs are read, and a block written after the listing is never touched', async (t) => {
    const fs = await fsStore(t);
    const early = await fs.put({ early: true });
    await fs.age(early, 2);
    const events: string[] = [];
    let late = '';
    const backend: Pick<BlockBackend, 'list' | 'get' | 'remove'> = {
      get: fs.backend.get,
      remove: fs.backend.remove,
      async *list() {
        yield* fs.backend.list();
        events.push('listed');
      },
    };
    const report = await collectGarbage(
      {
        backend,
        referencedCids: async () => {
          events.push('referenced read');
          // A write that lands now (its row not committed yet), even one with an old time.
          late = await fs.put({ late: true });
          await fs.age(late, 5);
          return new Set();
        },
        now: () => new Date(),
      },
      { graceSeconds: HOUR, dryRun: false },
    );
    assert.deepEqual(events, ['listed', 'referenced read']);
    assert.equal(report.removed, 1);
    assert.ok(!(await fs.exists(early)));
    assert.ok(await fs.exists(late), 'a block that was not listed is not removed');
  });

  test('a block written again counts as new', async (t) => {
    const fs = await fsStore(t);
    const cid = await fs.put({ again: true });
    await fs.age(cid, 2);
    await fs.backend.put(parseCid(cid), await fs.backend.get(parseCid(cid)));
    const report = await collectGarbage(
      { backend: fs.backend, referencedCids: async () => new Set(), now: () => new Date() },
      { graceSeconds: HOUR, dryRun: false },
    );
    assert.deepEqual([report.removed, report.young], [0, 1]);
  });
});

for (const kind of DATABASE_KINDS) {
  describe(`storage collection on Kubo (the stand-in), sightings on ${kind}`, () => {
    const cleanups: Array<() => Promise<unknown>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('an unreferenced pin is unpinned only when a run the grace period after the first sighting still finds it unreferenced', async () => {
      const kubo = await startKuboStandIn();
      cleanups.push(() => kubo.close());
      const testDatabase = await createTestDatabase(kind);
      cleanups.push(() => testDatabase.drop());
      const database = openDatabase({
        databaseUrl: testDatabase.databaseUrl,
        dataDir: testDatabase.dataDir,
        schema: testDatabase.schema,
      });
      cleanups.push(() => database.close());
      await migrateToLatest(database.db, database.dialect);
      const store = createEncryptedStore({
        backend: 'kubo',
        dataDir: testDatabase.dataDir,
        kuboApiUrl: kubo.url,
        masterKey: MASTER_KEY,
      });
      const backend = createKuboBackend(kubo.url);
      const referenced = new Set<string>();
      let clock = new Date('2030-01-01T00:00:00Z');
      const deps = {
        backend,
        referencedCids: async () => referenced,
        now: () => clock,
        sightings: unreferencedBlockSightings(database.db),
      };
      const later = (seconds: number) => {
        clock = new Date(clock.getTime() + seconds * 1000);
      };

      const kept = await store.putEncrypted({ kept: true }, OWNER);
      referenced.add(kept);
      const orphan = await store.putEncrypted({ orphan: true, padding: 'y'.repeat(100) }, OWNER);
      // A row that commits late: unreferenced at the first run, referenced at the second.
      const lateRow = await store.putEncrypted({ late: true }, OWNER);
      // Another application's pin on a shared node: a dag-cbor block that is no envelope.
      const foreign = (await createContentStore(backend).put({ someone: 'else' })).toString();

      const first = await collectGarbage(deps, { graceSeconds: HOUR, dryRun: false });
      assert.deepEqual([first.removed, first.young, first.foreign], [0, 3, 0]);
      const seen = await deps.sightings.read();
      assert.deepEqual([...seen.keys()].sort(), [orphan, lateRow, foreign].sort());
      assert.ok([...seen.values()].every((at) => at.getTime() === clock.getTime()));

      referenced.add(lateRow);
      const newOrphan = await store.putEncrypted({ orphan: 'new' }, OWNER);
      later(HOUR - 1);
      assert.equal((await collectGarbage(deps, { graceSeconds: HOUR, dryRun: false })).removed, 0);
      later(1);
      const orphanBytes = kubo.blocks.get(orphan)!.length;
      const pinsBefore = [...kubo.pins].sort();
      const sightingsBefore = await deps.sightings.read();
      const dry = await collectGarbage(deps, { graceSeconds: HOUR, dryRun: true });
      assert.deepEqual([dry.removed, dry.bytes, dry.young, dry.foreign], [1, orphanBytes, 1, 1]);
      assert.deepEqual([...kubo.pins].sort(), pinsBefore, 'a dry run unpins nothing');
      assert.deepEqual(await deps.sightings.read(), sightingsBefore, 'a dry run records nothing');

      const run = await collectGarbage(deps, { graceSeconds: HOUR, dryRun: false });
      assert.deepEqual([run.removed, run.bytes, run.young, run.foreign], [1, orphanBytes, 1, 1]);
      assert.ok(!kubo.pins.has(orphan), 'the orphan is unpinned');
      for (const cid of [kept, lateRow, newOrphan, foreign]) assert.ok(kubo.pins.has(cid), cid);
      assert.ok(kubo.requests.some((r) => r.path === '/api/v0/pin/ls' && r.query['type'] === 'recursive'));
      // The late row's and the removed orphan's sightings are dropped; the new orphan's is kept.
      assert.deepEqual([...(await deps.sightings.read()).keys()].sort(), [foreign, newOrphan].sort());
    });
  });
}
