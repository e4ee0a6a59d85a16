import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** Operations at the command line leave audit events with actor `cli` (issue #42); never a token. */
for (const kind of DATABASE_KINDS) {
  describe(`CLI audit events (${kind})`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(kind);
    });
    after(() => server.close());

    test('token revoke is recorded for the token’s client; an unknown or revoked token records nothing', async () => {
      const master = await server.createMaster('Revoking tenant');
      const created = await coffer(server, 'token', 'create', '--client', String(master.clientId), '--json');
      const token = JSON.parse(created.stdout).api_token as string;
      const revoked = await coffer(server, 'token', 'revoke', token);
      assert.equal(revoked.code, 0, revoked.stderr);
      const again = await coffer(server, 'token', 'revoke', token);
      assert.notEqual(again.code, 0);
      assert.notEqual((await coffer(server, 'token', 'revoke', 'no-such-token')).code, 0);
      const rows = await server.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('event_type', '=', 'client.token_revoke')
        .execute();
      assert.deepEqual(
        rows.map((row) => [row.actor, row.client_id, JSON.parse(row.targets)]),
        [['cli', master.clientId, { client_id: master.clientId }]],
      );
      assert.ok(!rows[0]!.targets.includes(token));
    });

    test('a backup is recorded service-wide; a refused one (the file exists) records nothing', async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'coffer-audit-backup-'));
      try {
        const out = path.join(dir, 'coffer.backup');
        const blocksOnly = kind === 'postgres' ? ['--blocks-only'] : [];
        const taken = await coffer(server, 'backup', '--out', out, ...blocksOnly, '--json');
        assert.equal(taken.code, 0, taken.stderr);
        const refused = await coffer(server, 'backup', '--out', out, ...blocksOnly);
        assert.notEqual(refused.code, 0);
        const rows = await server.database.db
          .selectFrom('audit_events')
          .selectAll()
          .where('event_type', '=', 'backup')
          .execute();
        assert.equal(rows.length, 1);
        const report = JSON.parse(taken.stdout);
        assert.deepEqual(
          [rows[0]!.actor, rows[0]!.client_id, JSON.parse(rows[0]!.targets)],
          [
            'cli',
            null,
            { key_id: report.key_id, blocks: report.blocks, database: kind === 'sqlite' ? 1 : 0 },
          ],
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
}
