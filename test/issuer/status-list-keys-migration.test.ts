// biome-ignore-all lint/suspicious/noExplicitAny: migrations run before the typed schema exists
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { createClient } from '../../src/clients/client-admin.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createMigrator, migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';

/**
 * Migration 0018: an issuer enabled before it gets an id for the key it has, and its status
 * lists are that key's, so they keep being served and signed as before.
 */
for (const kind of DATABASE_KINDS) {
  describe(`migration 0018: status lists per signing key (${kind})`, () => {
    it("names each issuer's key and gives it the issuer's existing lists", async (t) => {
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
      const db = database.db as Kysely<any>;
      const migrator = await createMigrator(db, database.dialect);
      assert.equal((await migrator.migrateTo('0017-w3c-claim-paths')).error, undefined);
      const now = new Date().toISOString();
      const issuers: number[] = [];
      for (const name of ['University', 'College']) {
        const { client_id: clientId } = await createClient(db, { name, master: true });
        issuers.push(clientId);
        await db
          .insertInto('issuers')
          .values({
            client_id: clientId,
            key_sealed: 'x',
            chain_pem: 'x',
            bbs_key_sealed: 'x',
            bbs_did: 'x',
            created_at: now,
          })
          .execute();
        await db
          .insertInto('status_lists')
          .values({
            id: `list-${clientId}`,
            client_id: clientId,
            kind: 'token',
            size: 8,
            bytes: '',
            updated_at: now,
          })
          .execute();
      }

      await migrateToLatest(db, database.dialect);

      const keys = await db.selectFrom('issuers').select(['client_id', 'signing_key_id']).execute();
      assert.equal(new Set(keys.map((k) => k.signing_key_id)).size, 2, 'one id per issuer');
      for (const { client_id, signing_key_id } of keys) {
        assert.match(signing_key_id, /^[A-Za-z0-9_-]{16}$/);
        const list = await db
          .selectFrom('status_lists')
          .select('signing_key_id')
          .where('id', '=', `list-${client_id}`)
          .executeTakeFirstOrThrow();
        assert.equal(list.signing_key_id, signing_key_id);
      }
    });
  });
}
