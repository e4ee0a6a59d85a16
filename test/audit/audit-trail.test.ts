import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { insertAuditEvent } from '../../src/audit/audit-events.ts';
import { sealAuditEvents, sweepAuditEvents } from '../../src/audit/audit-sealer.ts';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startSecondInstance, startTestServer, type TestServer } from '../helpers/server.ts';

const subClientBody = (subdomain: string) => ({
  name: 'Shop',
  address_1: '1 High St',
  country: 'GB',
  province: 'GB-ENG',
  city: 'London',
  timezone: 'Europe/London',
  domain: 'shop.example.org',
  subdomain,
});

const flipFirstBit = (signature: string) => {
  const bytes = Buffer.from(signature, 'base64url');
  bytes[0] = (bytes[0] ?? 0) ^ 1;
  return bytes.toString('base64url');
};

for (const kind of DATABASE_KINDS) {
  describe(`audit trail on ${kind}`, () => {
    let server: TestServer;
    let master: { clientId: number; token: string };
    let other: { clientId: number; token: string };
    let subId: number;

    const audit = (token: string, query = '') =>
      server.request('GET', `/v1/audit${query}`, { headers: { 'x-api-token': token } });

    const touch = (i: number) =>
      server.request('PUT', `/v1/sub_client/${subId}`, {
        headers: { 'x-api-token': master.token },
        body: { ...subClientBody(`audit-${kind}`), city: `City ${i}` },
      });

    before(async () => {
      server = await startTestServer(kind);
      master = await server.createMaster('Audited master');
      other = await server.createMaster('Other tenant');
    });
    after(() => server.close());

    test('a sub-client created and updated leaves events with the caller as actor and tenant', async () => {
      const created = await server.request('POST', '/v1/sub_client', {
        headers: { 'x-api-token': master.token },
        body: subClientBody(`audit-${kind}`),
      });
      assert.equal(created.status, 201, created.text);
      subId = created.body.data.client_id;
      const updated = await server.request('PUT', `/v1/sub_client/${subId}`, {
        headers: { 'x-api-token': master.token },
        body: { ...subClientBody(`audit-${kind}`), city: 'Leeds' },
      });
      assert.equal(updated.status, 200, updated.text);
      const page = await audit(master.token);
      assert.equal(page.status, 200, page.text);
      const [update, create] = page.body.data;
      assert.deepEqual(
        [create.type, create.actor, create.client_id, create.targets, create.outcome],
        [
          'subclient.create',
          `client:${master.clientId}`,
          master.clientId,
          { subclient_id: subId },
          'success',
        ],
      );
      assert.equal(create.request_id, created.headers.get('x-request-id') ?? create.request_id);
      assert.equal(update.type, 'subclient.update');
      assert.deepEqual(update.targets, { subclient_id: subId });
    });

    test('a refused act records nothing: a non-master, a taken subdomain, an unknown sub-client', async () => {
      const before = await server.database.db
        .selectFrom('audit_events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const taken = await server.request('POST', '/v1/sub_client', {
        headers: { 'x-api-token': master.token },
        body: subClientBody(`audit-${kind}`),
      });
      assert.equal(taken.status, 409);
      const missing = await server.request('PUT', '/v1/sub_client/999999', {
        headers: { 'x-api-token': master.token },
        body: subClientBody('nowhere'),
      });
      assert.equal(missing.status, 404);
      const token = await coffer(server, 'token', 'create', '--client', String(subId), '--json');
      assert.equal(token.code, 0, token.stderr);
      const subToken = JSON.parse(token.stdout).api_token as string;
      const refused = await server.request('POST', '/v1/sub_client', {
        headers: { 'x-api-token': subToken },
        body: subClientBody('refused'),
      });
      assert.equal(refused.status, 403);
      const afterwards = await server.database.db
        .selectFrom('audit_events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      // Only the CLI's token creation was recorded.
      assert.equal(Number(afterwards.n), Number(before.n) + 1);
    });

    test('CLI acts are recorded with actor cli and the client as tenant; a master sees its sub-clients', async () => {
      const set = await coffer(
        server,
        'client',
        'set',
        String(subId),
        '--privacy-link',
        'https://shop.example/p',
      );
      assert.equal(set.code, 0, set.stderr);
      const failed = await coffer(server, 'client', 'set', '999999', '--privacy-link', 'https://x.example/p');
      assert.notEqual(failed.code, 0);
      const page = await audit(master.token, `?type=client.update`);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.body.data.length, 1);
      assert.deepEqual(
        [page.body.data[0].actor, page.body.data[0].client_id, page.body.data[0].targets],
        ['cli', subId, { client_id: subId }],
      );
      const created = await coffer(server, 'client', 'create', '--name', 'CLI made', '--json');
      const id = JSON.parse(created.stdout).client_id;
      const row = await server.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('event_type', '=', 'client.create')
        .where('client_id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(row.actor, 'cli');
    });

    test('one tenant never sees another tenant’s events', async () => {
      const page = await audit(other.token, '?limit=200');
      assert.equal(page.status, 200);
      assert.deepEqual(page.body.data, []);
      const sub = await coffer(server, 'token', 'create', '--client', String(subId), '--json');
      const subPage = await audit(JSON.parse(sub.stdout).api_token);
      assert.ok(subPage.body.data.length > 0);
      assert.ok(subPage.body.data.every((event: { client_id: number }) => event.client_id === subId));
    });

    test('cursor pagination returns every event exactly once, newest first; bad cursors and limits are 400', async () => {
      for (let i = 0; i < 5; i++) assert.equal((await touch(i)).status, 200);
      const all = await audit(master.token, '?limit=200');
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const page = await audit(master.token, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(page.status, 200, page.text);
        assert.ok(page.body.data.length <= 2);
        seen.push(...page.body.data.map((event: { id: number }) => event.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.deepEqual(
        seen,
        all.body.data.map((event: { id: number }) => event.id),
      );
      assert.equal(new Set(seen).size, seen.length);
      assert.deepEqual(
        seen,
        [...seen].sort((a, b) => b - a),
      );
      for (const query of [
        '?cursor=nope',
        '?cursor=YzEuMA',
        '?limit=0',
        '?limit=201',
        '?limit=x',
        '?since=yesterday',
      ]) {
        const bad = await audit(master.token, query);
        assert.equal(bad.status, 400, query);
        assert.equal(typeof bad.body.error, 'string');
        assert.equal(typeof bad.body.error_description, 'string');
      }
      const unauthenticated = await server.request('GET', '/v1/audit');
      assert.equal(unauthenticated.status, 401);
      const future = await audit(master.token, `?since=${new Date(Date.now() + 3600_000).toISOString()}`);
      assert.deepEqual(future.body.data, []);
    });

    test('a user created over the API is a user.create event of the client; a duplicate records nothing', async () => {
      const body = {
        profile: { email_address: `ada-${kind}@example.org`, first_name: 'Ada', last_name: 'L' },
      };
      const created = await server.request('POST', '/v1/user/create', {
        headers: { 'x-api-token': master.token },
        body,
      });
      assert.equal(created.status, 201, created.text);
      const duplicate = await server.request('POST', '/v1/user/create', {
        headers: { 'x-api-token': master.token },
        body,
      });
      assert.equal(duplicate.status, 409, duplicate.text);
      const page = await audit(master.token, '?type=user.create');
      assert.equal(page.body.data.length, 1);
      const [event] = page.body.data;
      assert.deepEqual(
        [event.actor, event.client_id, event.targets],
        [`client:${master.clientId}`, master.clientId, { user_id: created.body.data.user_id }],
      );
    });

    test('GET /v1/audit is in the OpenAPI document with its query and error answers', async () => {
      const document = await server.request('GET', '/openapi.json');
      const operation = document.body.paths['/v1/audit'].get;
      assert.deepEqual(
        operation.parameters
          .filter((p: { in: string }) => p.in === 'query')
          .map((p: { name: string }) => p.name)
          .sort(),
        ['cursor', 'limit', 'since', 'type', 'until'],
      );
      assert.ok(operation.responses['200'] && operation.responses['400'] && operation.responses['401']);
    });

    test('the audit table holds no e-mail address, secret or token', async () => {
      const rotated = await coffer(server, 'client', 'secret-rotate', String(master.clientId), '--json');
      assert.equal(rotated.code, 0, rotated.stderr);
      const rows = await server.database.db.selectFrom('audit_events').selectAll().execute();
      assert.ok(rows.some((row) => row.event_type === 'client.secret_rotate'));
      const dump = JSON.stringify(rows);
      assert.doesNotMatch(dump, /@/);
      assert.doesNotMatch(dump, /cfr_(at|cs)_/);
      assert.ok(!dump.includes(master.token));
      assert.ok(!dump.includes(JSON.parse(rotated.stdout).client_secret));
      assert.ok(!dump.includes('London') && !dump.includes('Shop'));
    });

    test('coffer audit verify: a clean chain verifies; an edited, deleted or reordered row is named', async () => {
      const clean = await coffer(server, 'audit', 'verify', '--json');
      assert.equal(clean.code, 0, clean.stderr);
      const report = JSON.parse(clean.stdout);
      assert.equal(report.ok, true);
      assert.ok(report.to >= 10);
      const db = server.database.db;
      const at = async (seq: number) =>
        db.selectFrom('audit_events').selectAll().where('chain_seq', '=', seq).executeTakeFirstOrThrow();

      // Edited.
      const third = await at(3);
      await db
        .updateTable('audit_events')
        .set({ actor: 'admin:forged' })
        .where('id', '=', third.id)
        .execute();
      let broken = await coffer(server, 'audit', 'verify');
      assert.equal(broken.code, 1);
      assert.match(broken.stdout, /broken at position 3\b/);
      await db.updateTable('audit_events').set({ actor: third.actor }).where('id', '=', third.id).execute();
      assert.equal((await coffer(server, 'audit', 'verify')).code, 0);

      // Reordered: positions 4 and 5 swapped.
      const [fourth, fifth] = [await at(4), await at(5)];
      await sql`update audit_events set chain_seq = ${-1} where id = ${fourth.id}`.execute(db);
      await sql`update audit_events set chain_seq = ${4} where id = ${fifth.id}`.execute(db);
      await sql`update audit_events set chain_seq = ${5} where id = ${fourth.id}`.execute(db);
      broken = await coffer(server, 'audit', 'verify', '--json');
      assert.equal(broken.code, 1);
      assert.equal(JSON.parse(broken.stdout).position, 4);
      await sql`update audit_events set chain_seq = ${-1} where id = ${fifth.id}`.execute(db);
      await sql`update audit_events set chain_seq = ${4} where id = ${fourth.id}`.execute(db);
      await sql`update audit_events set chain_seq = ${5} where id = ${fifth.id}`.execute(db);
      assert.equal((await coffer(server, 'audit', 'verify')).code, 0);

      // Deleted.
      await db.deleteFrom('audit_events').where('chain_seq', '=', 6).execute();
      broken = await coffer(server, 'audit', 'verify', '--json');
      assert.equal(broken.code, 1);
      assert.deepEqual([JSON.parse(broken.stdout).ok, JSON.parse(broken.stdout).position], [false, 6]);
    });

    test('a burst larger than one sealing statement is sealed in order into one chain that verifies', async () => {
      const db = server.database.db;
      await db.deleteFrom('audit_events').execute();
      await db.deleteFrom('audit_checkpoints').execute();
      for (let i = 0; i < 250; i++)
        await insertAuditEvent(db, { clientId: null, actor: 'cli', type: 'bench.burst', targets: { i } });
      // The server's own periodic run may seal part of it meanwhile: the chain is one either way.
      await sealAuditEvents(db, server.database.dialect);
      const rows = await db.selectFrom('audit_events').select(['id', 'chain_seq']).orderBy('id').execute();
      assert.deepEqual(
        rows.map((row) => Number(row.chain_seq)),
        Array.from({ length: 250 }, (_, i) => i + 1),
      );
      const verified = await coffer(server, 'audit', 'verify', '--json');
      assert.equal(verified.code, 0, verified.stdout + verified.stderr);
      assert.equal(JSON.parse(verified.stdout).sealed, 250);
      await db.deleteFrom('audit_events').execute();
    });

    test('retention truncates at a signed checkpoint that verifies; a forged checkpoint fails', async () => {
      const db = server.database.db;
      // Start from an intact chain: the previous test deleted position 6.
      await db.deleteFrom('audit_events').execute();
      for (let i = 0; i < 3; i++) assert.equal((await touch(i)).status, 200);
      await sealAuditEvents(db, server.database.dialect);
      const rows = await db.selectFrom('audit_events').selectAll().orderBy('chain_seq').execute();
      assert.equal(rows.length, 3);
      // The two oldest are 500 days old.
      const old = new Date(Date.now() - 500 * 86_400_000).toISOString();
      await db
        .updateTable('audit_events')
        .set({ occurred_at: old })
        .where('id', 'in', [rows[0]!.id, rows[1]!.id])
        .execute();
      // The chain covers the time, so re-seal from scratch to start from a consistent state.
      await sql`update audit_events set chain_seq = null, prev_hash = null, hash = null`.execute(db);
      await sealAuditEvents(db, server.database.dialect);
      const deleted = await sweepAuditEvents(db, server.database.dialect, {
        retentionDays: 400,
        masterKey: server.masterKey,
        now: new Date(),
      });
      assert.equal(deleted, 2);
      const verified = await coffer(server, 'audit', 'verify', '--json');
      assert.equal(verified.code, 0, verified.stdout);
      assert.deepEqual([JSON.parse(verified.stdout).from, JSON.parse(verified.stdout).sealed], [3, 1]);

      const checkpoint = await db.selectFrom('audit_checkpoints').selectAll().executeTakeFirstOrThrow();
      await db.updateTable('audit_checkpoints').set({ chain_seq: 1 }).execute();
      const forged = await coffer(server, 'audit', 'verify');
      assert.equal(forged.code, 1);
      assert.match(forged.stdout, /checkpoint is not signed/);
      await db
        .updateTable('audit_checkpoints')
        // One bit of R changed. (Not the last byte: S's top byte is often zero, so writing "AA"
        // over the last two characters left one signature in sixteen as it was.)
        .set({ chain_seq: checkpoint.chain_seq, signature: flipFirstBit(checkpoint.signature) })
        .execute();
      assert.equal((await coffer(server, 'audit', 'verify')).code, 1);
    });

    test('coffer audit export --since writes JSON lines', async () => {
      const out = await coffer(
        server,
        'audit',
        'export',
        '--since',
        new Date(Date.now() - 86_400_000).toISOString(),
      );
      assert.equal(out.code, 0, out.stderr);
      const lines = out.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      assert.ok(lines.length >= 1);
      assert.ok(lines.every((line) => typeof line.type === 'string' && typeof line.actor === 'string'));
      const bad = await coffer(server, 'audit', 'export', '--since', 'last week');
      assert.equal(bad.code, 2);
    });

    test('two instances writing audited acts concurrently: one unbroken chain with every event', async () => {
      const db = server.database.db;
      await db.deleteFrom('audit_events').execute();
      await db.deleteFrom('audit_checkpoints').execute();
      const second = await startSecondInstance(server);
      try {
        const writes = Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? second.request : server.request)('POST', '/v1/sub_client', {
            headers: { 'x-api-token': master.token },
            body: subClientBody(`burst-${kind}-${i}`),
          }),
        );
        const answers = await Promise.all(writes);
        assert.ok(answers.every((answer) => answer.status === 201));
        const verified = await coffer(server, 'audit', 'verify', '--json');
        assert.equal(verified.code, 0, verified.stdout);
        const report = JSON.parse(verified.stdout);
        assert.deepEqual([report.ok, report.sealed, report.unsealed], [true, 40, 0]);
        const ids = new Set(answers.map((answer) => answer.body.data.client_id));
        const rows = await db.selectFrom('audit_events').select('targets').execute();
        assert.deepEqual(new Set(rows.map((row) => JSON.parse(row.targets).subclient_id)), ids);
      } finally {
        await second.close();
      }
    });
  });
}
