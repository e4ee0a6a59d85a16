import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';

for (const kind of DATABASE_KINDS) {
  test(`migrations on ${kind}: applied once, and unaffected by another deployment's tables in the same database`, async () => {
    const first = await createTestDatabase(kind);
    const second = await createTestDatabase(kind);
    const handles = [first, second].map((t) =>
      openDatabase({ databaseUrl: t.databaseUrl, dataDir: t.dataDir, schema: t.schema }),
    );
    try {
      const applied = await migrateToLatest(handles[0]!.db, handles[0]!.dialect);
      assert.ok(applied.length >= 5);
      assert.deepEqual(
        await migrateToLatest(handles[0]!.db, handles[0]!.dialect),
        [],
        'nothing to do the second time',
      );
      // With the first schema's migration tables in the database, the second still migrates itself.
      assert.deepEqual(await migrateToLatest(handles[1]!.db, handles[1]!.dialect), applied);
      const { rows } = await sql<{ n: number }>`select count(*) as n from users`.execute(handles[1]!.db);
      assert.equal(Number(rows[0]!.n), 0);
    } finally {
      for (const handle of handles) await handle.close();
      await first.drop();
      await second.drop();
    }
  });
}
