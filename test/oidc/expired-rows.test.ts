import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sweepExpiredRows } from '../../src/oidc/expired-rows.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

for (const kind of DATABASE_KINDS) {
  describe(`expired OIDC rows are swept, on ${kind}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind);
    });
    after(() => server.close());

    test('DPoP proof ids and revocations past their time go; live ones stay', async () => {
      const db = server.database.db;
      const now = 1_000_000;
      await db
        .insertInto('dpop_proofs')
        .values([
          { proof_key: 'old', expires_at: now - 1 },
          { proof_key: 'live', expires_at: now + 30 },
        ])
        .execute();
      await db
        .insertInto('revoked_tokens')
        .values([
          { jti: 'old', expires_at: now - 1 },
          { jti: 'live', expires_at: now + 30 },
        ])
        .execute();
      await sweepExpiredRows(db, now, 3600);
      assert.deepEqual(
        (await db.selectFrom('dpop_proofs').select('proof_key').execute()).map((r) => r.proof_key),
        ['live'],
      );
      assert.deepEqual(
        (await db.selectFrom('revoked_tokens').select('jti').execute()).map((r) => r.jti),
        ['live'],
      );
    });
  });
}
