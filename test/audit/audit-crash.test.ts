import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { sealAuditEvents } from '../../src/audit/audit-sealer.ts';
import { verifyAuditChain } from '../../src/audit/audit-verify.ts';
import { createClient } from '../../src/clients/client-admin.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';
import { processEnv, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

const BURST = 60;

for (const kind of DATABASE_KINDS) {
  describe(`audit trail on ${kind}: SIGKILL mid-burst`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('every acknowledged act has its event after a restart, and the chain verifies', async () => {
      const database = await createTestDatabase(kind);
      cleanups.push(() => database.drop());
      const env = await processEnv(database);
      let server: ServerProcess = await startServerProcess(env);
      cleanups.push(() => server.kill('SIGTERM'));
      const handle = openDatabase({
        databaseUrl: database.databaseUrl,
        dataDir: database.dataDir,
        poolSize: 2,
      });
      cleanups.push(() => handle.close());
      const { api_token: token } = await createClient(handle.db, { name: 'Crash master', master: true });

      const acknowledged: number[] = [];
      const burst = Array.from({ length: BURST }, async (_, i) => {
        try {
          const response = await fetch(`${server.url}/v1/sub_client`, {
            method: 'POST',
            headers: { 'x-api-token': token, 'content-type': 'application/json' },
            body: JSON.stringify({
              name: 'Shop',
              address_1: '1 High St',
              country: 'GB',
              province: 'GB-ENG',
              city: 'London',
              timezone: 'Europe/London',
              domain: 'shop.example.org',
              subdomain: `crash-${i}`,
            }),
          });
          if (response.status === 201)
            acknowledged.push(((await response.json()) as { data: { client_id: number } }).data.client_id);
        } catch {
          // Cut off by the kill: not acknowledged, so nothing is owed.
        }
      });
      // Kill once part of the burst is acknowledged.
      while (acknowledged.length < 10) await new Promise((r) => setTimeout(r, 5));
      await server.kill('SIGKILL');
      await Promise.all(burst);
      assert.ok(acknowledged.length < BURST, 'the kill came mid-burst');

      server = await startServerProcess(env);
      await sealAuditEvents(handle.db, handle.dialect);
      const rows = await handle.db
        .selectFrom('audit_events')
        .select('targets')
        .where('event_type', '=', 'subclient.create')
        .execute();
      const recorded = new Set(rows.map((row) => JSON.parse(row.targets).subclient_id as number));
      for (const id of acknowledged)
        assert.ok(recorded.has(id), `sub-client ${id} was acknowledged but has no event`);
      // Nothing was recorded for an act that did not happen.
      const created = await handle.db
        .selectFrom('clients')
        .select('client_id')
        .where('parent_id', 'is not', null)
        .execute();
      assert.deepEqual(new Set(created.map((row) => row.client_id)), recorded);
      const report = await verifyAuditChain(handle.db, [Buffer.from(env['MASTER_KEY']!, 'base64')]);
      assert.equal(report.ok, true, JSON.stringify(report));
    });
  });
}
