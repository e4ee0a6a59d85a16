import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { createGroupCommit } from '../../src/db/group-commit.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import type { Database } from '../../src/db/schema.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';

/** The commit discipline a transaction runs under: SQLite's synchronous level, PostgreSQL's synchronous_commit. */
async function commitSetting(db: Kysely<Database>, kind: string): Promise<string> {
  if (kind === 'sqlite') {
    const { rows } = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(db);
    return ['OFF', 'NORMAL', 'FULL', 'EXTRA'][rows[0]!.synchronous]!;
  }
  const { rows } = await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`.execute(db);
  return rows[0]!.synchronous_commit;
}

for (const kind of DATABASE_KINDS) {
  describe(`group commit durability (${kind})`, () => {
    for (const statements of ['many', 'one'] as const)
      test(`process-crash writes (${statements} statement${statements === 'one' ? '' : 's'}) commit without waiting for the disk, and every other write still does`, async () => {
        const testDb = await createTestDatabase(kind);
        const { db, dialect, close } = openDatabase({
          databaseUrl: testDb.databaseUrl,
          dataDir: testDb.dataDir,
          ...(testDb.schema ? { schema: testDb.schema } : {}),
        });
        try {
          await migrateToLatest(db, dialect);
          const seen: string[] = [];
          const recordProof = createGroupCommit(
            db,
            dialect,
            async (tx, key: string) => {
              seen.push(await commitSetting(tx, kind));
              const row = await tx
                .insertInto('dpop_proofs')
                .values({ proof_key: key, expires_at: 2_000_000_000 })
                .onConflict((oc) => oc.column('proof_key').doNothing())
                .returning('proof_key')
                .executeTakeFirst();
              return row !== undefined;
            },
            { durability: 'process-crash', statements },
          );
          const durableSeen: string[] = [];
          const durableWrite = createGroupCommit(db, dialect, async (tx, key: string) => {
            durableSeen.push(await commitSetting(tx, kind));
            await tx
              .insertInto('dpop_proofs')
              .values({ proof_key: key, expires_at: 2_000_000_000 })
              .execute();
            return true;
          });
          // Interleaved: a durable write waiting beside relaxed ones must not commit under their setting.
          const keys = Array.from({ length: 20 }, (_, i) => `proof-${i % 15}`);
          const results = await Promise.all([
            ...keys.map((key) => recordProof(key)),
            durableWrite('durable-1'),
            db.transaction().execute(async (tx) => commitSetting(tx, kind)),
          ]);
          const proofResults = results.slice(0, keys.length);
          assert.equal(proofResults.filter((r) => r === true).length, 15, 'each new id recorded once');
          assert.equal(proofResults.filter((r) => r === false).length, 5, 'repeated ids refused');
          const relaxed = kind === 'sqlite' ? 'NORMAL' : 'off';
          const durable = kind === 'sqlite' ? 'FULL' : 'on';
          assert.deepEqual(new Set(seen), new Set([relaxed]));
          assert.deepEqual(durableSeen, [durable]);
          assert.equal(results.at(-1), durable, 'a plain transaction alongside commits durably');
          assert.equal(await commitSetting(db, kind), durable, 'the connection is back to durable commits');
          const stored = await db.selectFrom('dpop_proofs').select('proof_key').execute();
          assert.equal(stored.length, 16);
        } finally {
          await close();
          await testDb.drop();
        }
      });

    test('a durable write of several statements is one transaction: an act and its audit event commit together or not at all', async () => {
      const testDb = await createTestDatabase(kind);
      const { db, dialect, close } = openDatabase({
        databaseUrl: testDb.databaseUrl,
        dataDir: testDb.dataDir,
        ...(testDb.schema ? { schema: testDb.schema } : {}),
      });
      try {
        await migrateToLatest(db, dialect);
        // The act's second statement (its audit event, say) fails after the first has run.
        const actThenFail = createGroupCommit(db, dialect, async (tx, key: string) => {
          await tx.insertInto('dpop_proofs').values({ proof_key: key, expires_at: 2_000_000_000 }).execute();
          await sql`insert into no_such_table values (1)`.execute(tx);
        });
        await assert.rejects(actThenFail('half-an-act'));
        const stored = await db.selectFrom('dpop_proofs').select('proof_key').execute();
        assert.deepEqual(stored, [], 'the first statement was undone with the second');
      } finally {
        await close();
        await testDb.drop();
      }
    });
  });
}
