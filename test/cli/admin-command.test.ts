import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const WALLET = '0x52908400098527886E0F7030069857D2E4169EE7';

/**
 * `coffer admin add|remove|list` (issue #43): the console's administrators. The e-mail address
 * is kept only as its blind index, and the trail records the row's id, never the address.
 */
for (const kind of DATABASE_KINDS) {
  describe(`coffer admin on ${kind}`, () => {
    let server: TestServer;
    let clientId: number;
    before(async () => {
      server = await startTestServer(kind);
      clientId = (await server.createMaster('University')).clientId;
    });
    after(async () => {
      await server.close();
    });

    test('add, list and remove administrators by e-mail and by wallet, each recorded with actor cli', async () => {
      const client = String(clientId);
      const byEmail = await coffer(
        server,
        'admin',
        'add',
        '--client',
        client,
        '--email',
        'Ada@Example.org',
        '--role',
        'owner',
        '--json',
      );
      assert.equal(byEmail.code, 0, byEmail.stderr);
      const added = JSON.parse(byEmail.stdout);
      assert.deepEqual(added, { id: added.id, client_id: clientId, role: 'owner' });
      const byWallet = await coffer(
        server,
        'admin',
        'add',
        '--client',
        client,
        '--wallet',
        WALLET,
        '--role',
        'auditor',
      );
      assert.equal(byWallet.code, 0, byWallet.stderr);
      assert.match(byWallet.stdout, /is auditor/);

      const again = await coffer(
        server,
        'admin',
        'add',
        '--client',
        client,
        '--email',
        'ada@example.org',
        '--role',
        'operator',
      );
      assert.equal(again.code, 1);
      assert.match(again.stderr, /already an administrator/);

      const rows = await server.database.db.selectFrom('console_admins').selectAll().execute();
      assert.equal(rows.length, 2);
      assert.ok(rows.every((r) => !JSON.stringify(r).toLowerCase().includes('ada@example.org')));
      assert.equal(rows.find((r) => r.wallet_address !== null)!.wallet_address, WALLET.toLowerCase());

      const listed = await coffer(server, 'admin', 'list', '--client', client, '--json');
      assert.equal(listed.code, 0, listed.stderr);
      const list = JSON.parse(listed.stdout);
      assert.deepEqual(
        list.map((a: { role: string; identity: string }) => [a.role, a.identity]),
        [
          ['owner', 'e-mail address'],
          ['auditor', `wallet ${WALLET.toLowerCase()}`],
        ],
      );

      const removed = await coffer(
        server,
        'admin',
        'remove',
        '--client',
        client,
        '--email',
        ' ada@example.org ',
        '--json',
      );
      assert.equal(removed.code, 0, removed.stderr);
      assert.deepEqual(JSON.parse(removed.stdout), { id: added.id, client_id: clientId, removed: true });
      const gone = await coffer(server, 'admin', 'remove', '--client', client, '--email', 'ada@example.org');
      assert.equal(gone.code, 1);

      const events = await server.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('event_type', 'in', ['admin.add', 'admin.remove'])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        events.map((e) => [e.event_type, e.actor, e.client_id]),
        [
          ['admin.add', 'cli', clientId],
          ['admin.add', 'cli', clientId],
          ['admin.remove', 'cli', clientId],
        ],
      );
      assert.deepEqual(JSON.parse(events[2]!.targets), { admin_id: added.id });
      assert.ok(events.every((e) => !e.targets.includes('@')));
    });

    test('a bad command line is a usage error (exit 2) and changes nothing', async () => {
      const cases = [
        ['admin', 'add', '--client', String(clientId), '--email', 'a@example.org'],
        ['admin', 'add', '--client', String(clientId), '--email', 'a@example.org', '--role', 'king'],
        [
          'admin',
          'add',
          '--client',
          String(clientId),
          '--email',
          'a@example.org',
          '--wallet',
          WALLET,
          '--role',
          'owner',
        ],
        ['admin', 'add', '--client', String(clientId), '--wallet', '0x123', '--role', 'owner'],
        ['admin', 'add', '--client', String(clientId), '--email', 'not-an-address', '--role', 'owner'],
        ['admin', 'list'],
        ['admin', 'promote', '--client', String(clientId)],
      ];
      for (const args of cases) {
        const result = await coffer(server, ...args);
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      }
      const rows = await server.database.db
        .selectFrom('console_admins')
        .selectAll()
        .where('role', '=', 'owner')
        .execute();
      assert.equal(rows.length, 0);
    });
  });
}
