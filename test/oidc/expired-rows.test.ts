import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SWEEP_BATCH, sweepExpiredRows } from '../../src/oidc/expired-rows.ts';
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

    test('console sessions that ended go with the minute sweep; live ones stay', async () => {
      const db = server.database.db;
      const now = 3_000_000;
      const at = (seconds: number) => new Date(seconds * 1000).toISOString();
      await db
        .insertInto('console_sessions')
        .values(
          ['ended', 'live'].map((id, i) => ({
            id_hash: id,
            email_index: null,
            wallet_address: '0xabc',
            created_at: at(now - 100),
            expires_at: at(i === 0 ? now - 1 : now + 30),
          })),
        )
        .execute();
      await sweepExpiredRows(db, now, 3600);
      assert.deepEqual(
        (await db.selectFrom('console_sessions').select('id_hash').execute()).map((r) => r.id_hash),
        ['live'],
      );
      await db.deleteFrom('console_sessions').execute();
    });

    test("people's sessions that ended go with the minute sweep; live ones stay", async () => {
      const db = server.database.db;
      const now = 4_000_000;
      const at = (seconds: number) => new Date(seconds * 1000).toISOString();
      const { clientId } = await server.createMaster('person sessions');
      const user = await db
        .insertInto('users')
        .values({
          tenant_id: clientId,
          profile_cid: 'cid',
          did: 'did:example:session-sweep',
          holder_key_sealed: 'k',
          created_at: '2026-01-01',
        })
        .returning('user_id')
        .executeTakeFirstOrThrow();
      await db
        .insertInto('sessions')
        .values(
          ['person-ended', 'person-live'].map((id, i) => ({
            id_hash: id,
            user_id: user.user_id,
            tenant_id: clientId,
            login_type: 'email',
            auth_time: now - 100,
            expires_at: at(i === 0 ? now - 1 : now + 30),
          })),
        )
        .execute();
      await sweepExpiredRows(db, now, 3600);
      const left = await db
        .selectFrom('sessions')
        .select('id_hash')
        .where('id_hash', 'like', 'person-%')
        .execute();
      assert.deepEqual(
        left.map((r) => r.id_hash),
        ['person-live'],
      );
      await db.deleteFrom('sessions').where('user_id', '=', user.user_id).execute();
    });

    test('log-in interactions past their time go with the minute sweep, sealed e-mail and all; live ones stay', async () => {
      const db = server.database.db;
      const now = 5_000_000;
      const at = (seconds: number) => new Date(seconds * 1000).toISOString();
      const { clientId } = await server.createMaster('interactions');
      await db
        .insertInto('interactions')
        .values(
          ['interaction-ended', 'interaction-live'].map((id, i) => ({
            id,
            kind: 'login',
            client_id: clientId,
            params: '{}',
            csrf_token: 'csrf',
            siwe_nonce: 'nonce',
            otp_email_sealed: 'sealed address',
            otp_attempts: 0,
            created_at: at(now - 1800),
            expires_at: at(i === 0 ? now - 1 : now + 30),
          })),
        )
        .execute();
      await sweepExpiredRows(db, now, 3600);
      const left = await db
        .selectFrom('interactions')
        .select('id')
        .where('id', 'like', 'interaction-%')
        .execute();
      assert.deepEqual(
        left.map((r) => r.id),
        ['interaction-live'],
      );
      await db.deleteFrom('interactions').where('client_id', '=', clientId).execute();
    });

    test('a sweep deletes in bounded batches: no statement takes more than SWEEP_BATCH rows, all expired go', async () => {
      const db = server.database.db;
      const now = 2_000_000;
      const expired = Math.floor(SWEEP_BATCH * 2.5);
      const { clientId } = await server.createMaster('sweep');
      const user = await db
        .insertInto('users')
        .values({
          tenant_id: clientId,
          profile_cid: 'cid',
          did: 'did:example:sweep',
          holder_key_sealed: 'k',
          created_at: '2026-01-01',
        })
        .returning('user_id')
        .executeTakeFirstOrThrow();
      for (let start = 0; start < expired; start += 500) {
        await db
          .insertInto('authorization_codes')
          .values(
            Array.from({ length: Math.min(500, expired - start) }, (_, i) => ({
              code_hash: `batch-${start + i}`,
              client_id: clientId,
              user_id: user.user_id,
              redirect_uri: 'https://rp.example/cb',
              scope: 'openid',
              login_type: 'wallet',
              auth_time: now,
              did: 'did:example:1',
              expires_at: now - 7200,
            })),
          )
          .execute();
      }
      // biome-ignore lint/suspicious/noExplicitAny: the executor is wrapped to count each statement's rows
      const executor = db.getExecutor() as any;
      const original = executor.executeQuery;
      const deleted: number[] = [];
      executor.executeQuery = async (...args: unknown[]) => {
        const result = await original.apply(executor, args);
        if (result.numAffectedRows !== undefined) deleted.push(Number(result.numAffectedRows));
        return result;
      };
      try {
        await sweepExpiredRows(db, now, 3600);
      } finally {
        executor.executeQuery = original;
      }
      assert.ok(deleted.length >= 3, `batches: ${deleted.length}`);
      assert.ok(Math.max(...deleted) <= SWEEP_BATCH, `rows per statement: ${deleted.join(', ')}`);
      const left = await db
        .selectFrom('authorization_codes')
        .select('code_hash')
        .where('code_hash', 'like', 'batch-%')
        .execute();
      assert.deepEqual(left, []);
    });
  });
}
