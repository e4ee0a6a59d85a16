import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { rememberNonce } from '../../src/db/seen-once.ts';
import { createTestDatabase } from '../helpers/databases.ts';

describe('single-use marks (rememberNonce)', () => {
  test("dropping a party's expired values reads them by expiry, not all of the party's live values", async () => {
    const t = await createTestDatabase('sqlite');
    const { db, dialect, close } = openDatabase({ databaseUrl: undefined, dataDir: t.dataDir });
    try {
      await migrateToLatest(db, dialect);
      const party = 'c_nonce:https://issuer.example/issuers/1';
      const now = 1_000_000;
      await db
        .insertInto('verifier_nonces')
        .values(
          Array.from({ length: 500 }, (_, i) => ({ verifier: party, nonce: `n${i}`, expires_at: now + 300 })),
        )
        .execute();
      await db
        .insertInto('verifier_nonces')
        .values({ verifier: party, nonce: 'old', expires_at: now - 1 })
        .execute();
      assert.equal(await rememberNonce(db, party, 'fresh', now, 300), true);
      assert.equal(await rememberNonce(db, party, 'fresh', now, 300), false, 'a value is taken once');
      const old = await db.selectFrom('verifier_nonces').select('nonce').where('nonce', '=', 'old').execute();
      assert.deepEqual(old, [], 'the expired value went');
      const plan = await sql<{ detail: string }>`explain query plan delete from verifier_nonces
        where verifier = ${party} and expires_at < ${now}`.execute(db);
      const detail = plan.rows.map((r) => r.detail).join('; ');
      assert.match(detail, /verifier_nonces_expiry_idx \(verifier=\? AND expires_at<\?\)/, detail);
    } finally {
      await close();
      await t.drop();
    }
  });
});
