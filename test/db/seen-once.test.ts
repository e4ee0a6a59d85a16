import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { rememberNonce } from '../../src/db/seen-once.ts';
import { sweepExpiredRows } from '../../src/oidc/expired-rows.ts';
import { createTestDatabase, DATABASE_KINDS, type DatabaseKind } from '../helpers/databases.ts';

async function withDatabase(
  kind: DatabaseKind,
  run: (db: ReturnType<typeof openDatabase>['db']) => Promise<void>,
) {
  const t = await createTestDatabase(kind);
  const { db, dialect, close } = openDatabase({ databaseUrl: t.databaseUrl, dataDir: t.dataDir });
  try {
    await migrateToLatest(db, dialect);
    await run(db);
  } finally {
    await close();
    await t.drop();
  }
}

const party = 'c_nonce:https://issuer.example/issuers/1';
const now = 1_000_000;

for (const kind of DATABASE_KINDS) {
  describe(`single-use marks (rememberNonce), on ${kind}`, () => {
    test("a call touches only its own value: a party's other expired values are left to the sweep", async () => {
      await withDatabase(kind, async (db) => {
        await db
          .insertInto('verifier_nonces')
          .values([
            { verifier: party, nonce: 'old', expires_at: now - 1 },
            { verifier: party, nonce: 'live', expires_at: now + 300 },
          ])
          .execute();
        assert.equal(await rememberNonce(db, party, 'fresh', now, 300), true);
        const left = await db.selectFrom('verifier_nonces').select('nonce').orderBy('nonce').execute();
        assert.deepEqual(
          left.map((r) => r.nonce),
          ['fresh', 'live', 'old'],
          'no cleanup on the request path',
        );
        await sweepExpiredRows(db, now, 3600);
        const swept = await db.selectFrom('verifier_nonces').select('nonce').orderBy('nonce').execute();
        assert.deepEqual(
          swept.map((r) => r.nonce),
          ['fresh', 'live'],
          'the sweep takes the expired one',
        );
      });
    });

    test('a value is refused within its lifetime and taken afresh once expired, though its row is still there', async () => {
      await withDatabase(kind, async (db) => {
        assert.equal(await rememberNonce(db, party, 'v', now, 300), true);
        assert.equal(
          await rememberNonce(db, party, 'v', now + 299, 300),
          false,
          'a replay inside the lifetime',
        );
        assert.equal(
          await rememberNonce(db, party, 'v', now + 300, 300),
          false,
          'still inside at the last second',
        );
        assert.equal(
          await rememberNonce(db, party, 'v', now + 301, 300),
          true,
          'expired: the check itself says so',
        );
        assert.equal(
          await rememberNonce(db, party, 'v', now + 302, 300),
          false,
          'and the new lifetime holds',
        );
        assert.equal(await rememberNonce(db, 'another party', 'v', now, 300), true, 'per party');
      });
    });

    test('concurrent callers: exactly one takes a new value, and exactly one an expired one', async () => {
      await withDatabase(kind, async (db) => {
        const race = async (at: number) =>
          (
            await Promise.all(Array.from({ length: 8 }, () => rememberNonce(db, party, 'raced', at, 300)))
          ).filter(Boolean).length;
        assert.equal(await race(now), 1);
        assert.equal(await race(now + 100), 0);
        assert.equal(await race(now + 1000), 1);
      });
    });
  });
}
