import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { createMigrator, migrateToLatest } from '../../src/db/migrate.ts';
import { countSubClients } from '../../src/subclients/subclient-repository.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';

const now = new Date().toISOString();
const client = (name: string, parentId: number | null) => ({
  name,
  is_master: parentId === null ? 1 : 0,
  is_verifier: 0,
  parent_id: parentId,
  redirect_uris: '[]',
  created_at: now,
});

for (const kind of DATABASE_KINDS) {
  describe(`sub-client count (migration 0006) on ${kind}`, () => {
    test('counts the sub-clients that existed before the migration, and follows every change after it', async (t) => {
      const testDatabase = await createTestDatabase(kind);
      const database = openDatabase({
        databaseUrl: testDatabase.databaseUrl,
        dataDir: testDatabase.dataDir,
        schema: testDatabase.schema,
      });
      t.after(async () => {
        await database.close();
        await testDatabase.drop();
      });
      // biome-ignore lint/suspicious/noExplicitAny: the rows predate the typed schema's new column
      const db = database.db as any;
      const migrator = await createMigrator(db, database.dialect);
      const before = await migrator.migrateTo('0005-wallet');
      assert.equal(before.error, undefined);

      const insert = async (name: string, parentId: number | null) =>
        (
          await db
            .insertInto('clients')
            .values(client(name, parentId))
            .returning('client_id')
            .executeTakeFirst()
        ).client_id as number;
      const a = await insert('A', null);
      const b = await insert('B', null);
      for (let i = 0; i < 4; i++) await insert(`A${i}`, a);
      await insert('B0', b);

      await migrateToLatest(db, database.dialect);
      assert.equal(await countSubClients(database.db, a), 4);
      assert.equal(await countSubClients(database.db, b), 1);

      const moved = await insert('A4', a);
      assert.equal(await countSubClients(database.db, a), 5);
      await db.updateTable('clients').set({ parent_id: b }).where('client_id', '=', moved).execute();
      assert.equal(await countSubClients(database.db, a), 4);
      assert.equal(await countSubClients(database.db, b), 2);
      await db.deleteFrom('clients').where('client_id', '=', moved).execute();
      assert.equal(await countSubClients(database.db, b), 1);
      // A write that fails (unique subdomain) leaves the count as it was.
      await db.updateTable('clients').set({ subdomain: 'taken' }).where('name', '=', 'B0').execute();
      await assert.rejects(
        db
          .insertInto('clients')
          .values({ ...client('X', b), subdomain: 'taken' })
          .execute(),
      );
      assert.equal(await countSubClients(database.db, b), 1);
      const { n } = (
        await sql<{ n: number }>`select count(*) as n from clients where parent_id = ${a}`.execute(db)
      ).rows[0]!;
      assert.equal(Number(n), await countSubClients(database.db, a));
    });
  });
}
