import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CREDENTIALS_PER_ACCOUNT, growTo } from '../../bench/scale/seed-bulk.ts';
import { credentialPool, runScaleBenchmark } from '../../bench/scale.ts';
import { prepareHolder } from '../../bench/scenarios/credentials.ts';
import { createRelyingParty, exchangeForAccessToken, mintCode, withServerState } from '../../bench/seed.ts';
import { type BenchDatabase, type BenchServer, startBenchServer } from '../../bench/server.ts';

/**
 * The scale harness (`npm run bench -- --only=scale`) at tiny sizes, so that CI keeps it working:
 * the bulk seeding grows without duplicates and leaves accounts the server itself serves, and a
 * whole run of two sizes yields every figure with no failed round trip.
 */
const database: BenchDatabase = process.env['TEST_DATABASE_URL'] ? 'postgres' : 'sqlite';

describe(`scale harness (${database})`, () => {
  let server: BenchServer;
  before(async () => {
    server = await startBenchServer(database);
  });
  after(() => server.stop());

  test('seeding grows from one size to the next, and a seeded account is read back over HTTP', async () => {
    const created = (await server.coffer('client', 'create', '--name', 'Issuer', '--master')) as {
      client_id: number;
    };
    await server.coffer('issuer', 'enable', '--client', String(created.client_id));
    // The accounts' tenant is a relying party here, so that one of them can log in and list.
    const rp = await withServerState(server, createRelyingParty);
    const tenantId = rp.client_id;
    const holder = await prepareHolder(server);
    // Three of each format, stored through the service: the distinct credentials accounts hold.
    const pool = await credentialPool(server, holder, 3);
    const options = { tenantId, issuerClientId: created.client_id, pool };
    const small = await growTo(server, { ...options, size: 30 });
    assert.deepEqual(small, { accounts: 3, credentials: 30, history: 30, offers: 30, statusEntries: 30 });
    const grown = await growTo(server, { ...options, size: 70 });
    assert.deepEqual(grown, { accounts: 7, credentials: 70, history: 70, offers: 70, statusEntries: 70 });
    assert.deepEqual(await growTo(server, { ...options, size: 70 }), grown, 'a second pass adds nothing');

    // The last filler account logs in and lists its credentials: rows and blocks as the service reads them.
    const code = await withServerState(server, async ({ database }) => {
      const user = await database.db
        .selectFrom('users')
        .select(['user_id', 'did', 'wallet_address'])
        .where('tenant_id', '=', tenantId)
        .orderBy('user_id', 'desc')
        .executeTakeFirstOrThrow();
      return mintCode(database.db, tenantId, user);
    });
    const token = await exchangeForAccessToken(server, rp, code);
    const listed = await fetch(`${server.url}/v1/openidc/credentials`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(listed.status, 200);
    const body = (await listed.json()) as { data: unknown[] };
    assert.equal(body.data.length, CREDENTIALS_PER_ACCOUNT);
  });
});

test(`a scale run over two tiny sizes yields every figure (${database})`, { timeout: 300_000 }, async () => {
  Object.assign(process.env, { BENCH_SCALE_STORES: '30', BENCH_SCALE_CODES: '300', BENCH_SCALE_POOL: '3' });
  const table = await runScaleBenchmark({
    database,
    sizes: [50, 200],
    duration: 0.2,
    connections: 2,
    warmUpSeconds: 0.05,
  });
  for (const row of [
    'log-in code → token: p50 ms',
    'userinfo: server CPU ms',
    'credential list (20): p99 ms',
    'proof (bbs-2023, 10 claims): p50 ms',
    'store (bbs-2023, 10 claims): p50 ms',
    'pre-authorized issuance (dc+sd-jwt): p50 ms',
    'verification (dc+sd-jwt): p50 ms',
    'status-list fetch: p50 ms',
    'wallet page: p50 ms',
    'storage gc --dry-run, ms per 10⁵ rows added',
    'master-key rotate --dry-run, ms per 10⁵ rows added',
    'database bytes per credential added',
    'block-store bytes per account added',
    'server RSS MiB',
  ]) {
    const escaped = row.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    assert.match(table, new RegExp(`\\| ${escaped} +\\| [-–0-9.]+ +\\| [-0-9.]+ `), row);
  }
  assert.match(table, /\| accounts seeded +\| 5 +\| 20 +\| 4\.00× +\|/);
  assert.match(table, /\| credentials seeded +\| 50 +\| 200 +\| 4\.00× +\|/);
  assert.doesNotMatch(table, /failed round trips/);
});
