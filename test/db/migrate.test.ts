import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';

describe('migrations on a PostgreSQL shared by several schemas', {
  skip: !DATABASE_KINDS.includes('postgres') && 'needs TEST_DATABASE_URL',
}, () => {
  test("a schema migrates while another schema holds Kysely's migration tables", async () => {
    const first = await createTestDatabase('postgres');
    const second = await createTestDatabase('postgres');
    const open = (t: typeof first) =>
      openDatabase({ databaseUrl: t.databaseUrl, dataDir: t.dataDir, schema: t.schema! });
    const a = open(first);
    const b = open(second);
    try {
      const all = await migrateToLatest(a.db, a.dialect);
      assert.ok(all.length > 0);
      assert.deepEqual(
        await migrateToLatest(b.db, b.dialect),
        all,
        'every migration runs in the second schema',
      );
      const { rows } = await sql<{ table_name: string }>`select table_name from information_schema.tables
        where table_schema = ${second.schema} and table_name like 'kysely%' order by table_name`.execute(
        b.db,
      );
      assert.deepEqual(
        rows.map((r) => r.table_name),
        ['kysely_migration', 'kysely_migration_lock'],
      );
      assert.deepEqual(await migrateToLatest(b.db, b.dialect), [], 'and nothing is left to apply');
    } finally {
      await a.close();
      await b.close();
      await first.drop();
      await second.drop();
    }
  });
});
