import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, type Kysely, sql } from 'kysely';
import {
  countWalletCredentials,
  findWalletCredentials,
} from '../../src/credentials/held-credential-repository.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import type { Database } from '../../src/db/schema.ts';
import {
  configurationsWithScope,
  findUnfinishedOffersOf,
  issuedCredentialsOf,
  sweepExpired,
} from '../../src/issuer/issuer-repository.ts';
import { sweepExpiredRows } from '../../src/oidc/expired-rows.ts';
import { findAccountsOfIdentity } from '../../src/users/user-repository.ts';
import { dropReadClaims } from '../../src/verifier/verifier-repository.ts';
import { CREDENTIALS_SHOWN } from '../../src/wallet/wallet-service.ts';
import {
  createTestDatabase,
  DATABASE_KINDS,
  type DatabaseKind,
  type TestDatabase,
} from '../helpers/databases.ts';

/**
 * The plans each database chooses for statements that must stay index lookups as tables grow
 * (issue #44). The tables are seeded with a few thousand rows and analysed, so the planner
 * chooses by real statistics (not by enable_seqscan = off): a full scan here is one the service
 * would run at a million rows.
 */

/** How a database shows a plan, what in it reads a whole table, and how it is seeded. */
interface PlanDialect {
  kind: DatabaseKind;
  explain(sql: string): string;
  planOf(rows: Record<string, unknown>[]): string;
  /** A line of the plan that reads all of `table` (or all of one of its indexes). */
  fullScan(table: string): RegExp;
  /** The plan sorts rows it read instead of reading them in order. */
  sort: RegExp;
  /** An index walked whole with only a filter, which reads the table all the same. */
  walkedWhole: RegExp;
  seed(db: Kysely<Database>, now: number): Promise<void>;
}

/** The statements `run` sends, not executed (answered with no rows), as the service writes them. */
async function statementsOf(db: Kysely<Database>, run: () => Promise<unknown>): Promise<CompiledQuery[]> {
  // biome-ignore lint/suspicious/noExplicitAny: the executor is patched for the duration of `run`
  const executor = db.getExecutor() as any;
  const original = executor.executeQuery;
  const seen: CompiledQuery[] = [];
  executor.executeQuery = async (query: CompiledQuery) => {
    seen.push(query);
    return { rows: [], numAffectedRows: 0n };
  };
  try {
    await run();
  } finally {
    executor.executeQuery = original;
  }
  return seen;
}

interface Plan {
  sql: string;
  plan: string;
}

async function plansOf(
  dialect: PlanDialect,
  db: Kysely<Database>,
  run: () => Promise<unknown>,
): Promise<Plan[]> {
  const plans: Plan[] = [];
  for (const query of await statementsOf(db, run)) {
    const { rows } = await db.executeQuery<Record<string, unknown>>(
      CompiledQuery.raw(dialect.explain(query.sql), [...query.parameters]),
    );
    plans.push({ sql: query.sql, plan: dialect.planOf(rows) });
  }
  assert.ok(plans.length > 0, 'the function ran a statement');
  return plans;
}

async function seedPostgres(db: Kysely<Database>, now: number): Promise<void> {
  await sql`insert into clients (name, created_at) select 'tenant ' || g, '2026-01-01' from generate_series(1, 20) g`.execute(
    db,
  );
  await sql`insert into issuers (client_id, key_sealed, chain_pem, bbs_key_sealed, bbs_did, created_at)
    select client_id, 'k', 'c', 'b', 'did:b:' || client_id, '2026-01-01' from clients`.execute(db);
  await sql`insert into users (tenant_id, email_index, profile_cid, did, holder_key_sealed, created_at)
    select (g % 20) + 1, 'e' || g, 'cid', 'did:u:' || g, 'k', '2026-01-01' from generate_series(1, 5000) g`.execute(
    db,
  );
  await sql`insert into issuer_offers (id, client_id, configuration_ids, grant_type, user_id, status, created_at, expires_at)
    select 'offer-' || g, (g % 20) + 1, '[]', 'pre-authorized_code', (g % 5000) + 1,
           case when g % 10 = 0 then 'offered' else 'issued' end, '2026-01-01', '2026-01-02'
    from generate_series(1, 20000) g`.execute(db);
  await sql`insert into issued_credentials (id, client_id, configuration_id, format, status, credential_hash, issued_at)
    select 'ic-' || g, (g % 2) + 1, 'c', 'dc+sd-jwt', 'valid', 'h' || g,
           to_char(timestamp '2026-01-01' + g * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
    from generate_series(1, 20000) g`.execute(db);
  await sql`insert into authorization_codes (code_hash, client_id, user_id, redirect_uri, scope, login_type, auth_time, did, expires_at)
    select 'code-' || g, 1, (g % 5000) + 1, 'https://rp.example/cb', 'openid', 'wallet', ${now}, 'did:u:1', ${now} + g
    from generate_series(1, 20000) g`.execute(db);
  await sql`insert into verifier_nonces (verifier, nonce, expires_at)
    select 'party-' || (g % 50), 'n' || g, ${now} + g from generate_series(1, 20000) g`.execute(db);
  await sql`insert into sessions (id_hash, user_id, tenant_id, login_type, auth_time, expires_at)
    select 'session-' || g, (g % 5000) + 1, (g % 20) + 1, 'email', ${now},
           to_char(to_timestamp(${now} + g) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    from generate_series(1, 20000) g`.execute(db);
  await sql`insert into interactions (id, kind, client_id, params, csrf_token, siwe_nonce, created_at, expires_at)
    select 'interaction-' || g, 'login', (g % 20) + 1, '{}', 'c', 'n', '2026-01-01',
           to_char(to_timestamp(${now} + g) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    from generate_series(1, 20000) g`.execute(db);
  await sql`insert into credentials (user_id, credential_id, cid, content_hash, created_at)
    select (g % 5000) + 1, 'urn:c:' || g, 'cid', 'h', '2026-01-01' from generate_series(1, 25000) g`.execute(
    db,
  );
  await sql`update users set wallet_address = '0x' || user_id where user_id % 3 = 0`.execute(db);
  await sql`insert into issuer_configurations (client_id, configuration_id, configuration, updated_at, scope)
    select (g % 20) + 1, 'config-' || g, '{}', '2026-01-01', 'scope-' || g from generate_series(1, 5000) g`.execute(
    db,
  );
  await sql`insert into issuer_codes (code_hash, client_id, wallet_client_id, redirect_uri, code_challenge, "grant", expires_at)
    select md5('icode-' || g) || md5('x' || g), (g % 20) + 1, 'https://wallet.example', 'https://wallet.example/callback',
           md5('c' || g) || md5('d' || g), '{"configuration_ids":["diploma"],"offer_id":"' || md5('o' || g) || '","scope":"openid"}',
           ${now} + g
    from generate_series(1, 20000) g`.execute(db);
  // Requests outlive their claims: most rows here were read and emptied long ago.
  await sql`insert into verifier_requests (id, client_id, status, request, nonce, state, encryption_key_sealed,
                                          claims_sealed, created_at, expires_at, first_read_at)
    select 'vr-' || g, (g % 20) + 1, 'answered', '{}', 'n' || g, 's' || g, 'k',
           case when g % 100 = 0 then 'sealed' end, '2026-01-01', '2026-01-02',
           case when g % 3 = 0 then null else '2026-01-01T00:00:00Z' end
    from generate_series(1, 20000) g`.execute(db);
  await sql`analyze`.execute(db);
}

/** The same rows as seedPostgres, from a recursive count (SQLite has no generate_series). */
async function seedSqlite(db: Kysely<Database>, now: number): Promise<void> {
  const upTo = (n: number) =>
    sql.raw(`with recursive g(g) as (select 1 union all select g + 1 from g where g < ${n})`);
  const iso = (seconds: string) => sql.raw(`strftime('%Y-%m-%dT%H:%M:%fZ', ${seconds}, 'unixepoch')`);
  await sql`${upTo(20)} insert into clients (name, created_at) select 'tenant ' || g, '2026-01-01' from g`.execute(
    db,
  );
  await sql`insert into issuers (client_id, key_sealed, chain_pem, bbs_key_sealed, bbs_did, created_at)
    select client_id, 'k', 'c', 'b', 'did:b:' || client_id, '2026-01-01' from clients`.execute(db);
  await sql`${upTo(5000)} insert into users (tenant_id, email_index, profile_cid, did, holder_key_sealed, created_at)
    select (g % 20) + 1, 'e' || g, 'cid', 'did:u:' || g, 'k', '2026-01-01' from g`.execute(db);
  await sql`${upTo(20000)} insert into issuer_offers (id, client_id, configuration_ids, grant_type, user_id, status, created_at, expires_at)
    select 'offer-' || g, (g % 20) + 1, '[]', 'pre-authorized_code', (g % 5000) + 1,
           case when g % 10 = 0 then 'offered' else 'issued' end, '2026-01-01', '2026-01-02'
    from g`.execute(db);
  await sql`${upTo(20000)} insert into issued_credentials (id, client_id, configuration_id, format, status, credential_hash, issued_at)
    select 'ic-' || g, (g % 2) + 1, 'c', 'dc+sd-jwt', 'valid', 'h' || g,
           strftime('%Y-%m-%dT%H:%M:%SZ', 1767225600 + g, 'unixepoch')
    from g`.execute(db);
  await sql`${upTo(20000)} insert into authorization_codes (code_hash, client_id, user_id, redirect_uri, scope, login_type, auth_time, did, expires_at)
    select 'code-' || g, 1, (g % 5000) + 1, 'https://rp.example/cb', 'openid', 'wallet', ${now}, 'did:u:1', ${now} + g
    from g`.execute(db);
  await sql`${upTo(20000)} insert into verifier_nonces (verifier, nonce, expires_at)
    select 'party-' || (g % 50), 'n' || g, ${now} + g from g`.execute(db);
  await sql`${upTo(20000)} insert into sessions (id_hash, user_id, tenant_id, login_type, auth_time, expires_at)
    select 'session-' || g, (g % 5000) + 1, (g % 20) + 1, 'email', ${now}, ${iso(`${now} + g`)}
    from g`.execute(db);
  await sql`${upTo(20000)} insert into interactions (id, kind, client_id, params, csrf_token, siwe_nonce, created_at, expires_at)
    select 'interaction-' || g, 'login', (g % 20) + 1, '{}', 'c', 'n', '2026-01-01', ${iso(`${now} + g`)}
    from g`.execute(db);
  await sql`${upTo(25000)} insert into credentials (user_id, credential_id, cid, content_hash, created_at)
    select (g % 5000) + 1, 'urn:c:' || g, 'cid', 'h', '2026-01-01' from g`.execute(db);
  await sql`update users set wallet_address = '0x' || user_id where user_id % 3 = 0`.execute(db);
  await sql`${upTo(5000)} insert into issuer_configurations (client_id, configuration_id, configuration, updated_at, scope)
    select (g % 20) + 1, 'config-' || g, '{}', '2026-01-01', 'scope-' || g from g`.execute(db);
  await sql`${upTo(20000)} insert into issuer_codes (code_hash, client_id, wallet_client_id, redirect_uri, code_challenge, "grant", expires_at)
    select 'icode-' || g, (g % 20) + 1, 'https://wallet.example', 'https://wallet.example/callback',
           'challenge-' || g, '{"configuration_ids":["diploma"],"offer_id":"o' || g || '","scope":"openid"}',
           ${now} + g
    from g`.execute(db);
  await sql`${upTo(20000)} insert into verifier_requests (id, client_id, status, request, nonce, state, encryption_key_sealed,
                                          claims_sealed, created_at, expires_at, first_read_at)
    select 'vr-' || g, (g % 20) + 1, 'answered', '{}', 'n' || g, 's' || g, 'k',
           case when g % 100 = 0 then 'sealed' end, '2026-01-01', '2026-01-02',
           case when g % 3 = 0 then null else '2026-01-01T00:00:00Z' end
    from g`.execute(db);
  await sql`analyze`.execute(db);
}

const DIALECTS: PlanDialect[] = [
  {
    kind: 'postgres',
    explain: (statement) => `explain ${statement}`,
    planOf: (rows) => rows.map((r) => r['QUERY PLAN']).join('\n'),
    fullScan: (table) => new RegExp(`Seq Scan on ${table}\\b`),
    sort: /Sort/,
    walkedWhole: /Index Scan(?: Backward)? using \w+_pkey on \w+\s+(?:\(cost[^)]*\)\s+)?Filter/,
    seed: seedPostgres,
  },
  {
    kind: 'sqlite',
    explain: (statement) => `explain query plan ${statement}`,
    planOf: (rows) => rows.map((r) => r['detail']).join('\n'),
    // "SCAN t", "SCAN t USING INDEX i" and "SCAN t USING COVERING INDEX i" all read every row.
    fullScan: (table) => new RegExp(`\\bSCAN ${table}\\b`),
    sort: /USE TEMP B-TREE/,
    walkedWhole: /\bSCAN \w+ USING (?:COVERING )?INDEX/,
    seed: seedSqlite,
  },
];

for (const dialect of DIALECTS) {
  describe(`statements on large tables are index lookups on ${dialect.kind}`, {
    skip: !DATABASE_KINDS.includes(dialect.kind),
  }, () => {
    let testDatabase: TestDatabase;
    let handle: ReturnType<typeof openDatabase>;
    let db: Kysely<Database>;
    const now = Math.floor(Date.now() / 1000);
    const plans = (run: () => Promise<unknown>) => plansOf(dialect, db, run);
    const refuseFullScan = (found: Plan[], tables: string[]) => {
      for (const { sql: statement, plan } of found) {
        for (const table of tables)
          assert.doesNotMatch(plan, dialect.fullScan(table), `${statement}\n${plan}`);
      }
    };
    const refuse = (found: Plan[], pattern: RegExp) => {
      for (const { sql: statement, plan } of found)
        assert.doesNotMatch(plan, pattern, `${statement}\n${plan}`);
    };

    before(async () => {
      testDatabase = await createTestDatabase(dialect.kind);
      handle = openDatabase({ databaseUrl: testDatabase.databaseUrl, dataDir: testDatabase.dataDir });
      db = handle.db;
      await migrateToLatest(db, handle.dialect);
      await dialect.seed(db, now);
    });
    after(async () => {
      await handle?.close();
      await testDatabase?.drop();
    });

    test("the wallet page: a person's accounts and their credentials, by index on users and credentials", async () => {
      const found = [
        ...(await plans(() => findAccountsOfIdentity(db, { wallet: '0x42' }))),
        ...(await plans(() => findAccountsOfIdentity(db, { wallet: '0x42', emailIndexes: ['e7', 'e8'] }))),
        ...(await plans(() => findWalletCredentials(db, [42]))),
        ...(await plans(() => findWalletCredentials(db, [42, 7, 8]))),
        ...(await plans(() => findWalletCredentials(db, [42, 7, 8], CREDENTIALS_SHOWN))),
        ...(await plans(() => countWalletCredentials(db, [42, 7, 8]))),
      ];
      refuseFullScan(found, ['users', 'credentials']);
      refuse(found, dialect.walkedWhole);
    });

    test("the verifier's retention sweep: only the requests that still hold claims", async () => {
      const found = await plans(() => dropReadClaims(db, '2026-06-01T00:00:00Z'));
      refuseFullScan(found, ['verifier_requests']);
      assert.match(found[0]!.plan, /verifier_requests_claims_read_idx/, found[0]!.plan);
    });

    test("an erased account's unfinished offers: by index on issuer_offers.user_id", async () => {
      refuseFullScan(await plans(() => findUnfinishedOffersOf(db, 42)), ['issuer_offers']);
    });

    test("a tenant's issued credentials, first page and after a cursor: by index, without a sort", async () => {
      const found = [
        ...(await plans(() => issuedCredentialsOf(db, 2))),
        ...(await plans(() =>
          issuedCredentialsOf(db, 2, undefined, { issuedAt: '2026-01-01T01:00:00Z', id: 'ic-7000' }),
        )),
      ];
      refuseFullScan(found, ['issued_credentials']);
      refuse(found, dialect.sort);
    });

    // Already indexed (migration 0016, unique on scope); kept here so it stays one lookup per request.
    test('an authorization request naming a scope: by index on issuer_configurations.scope', async () => {
      refuseFullScan(await plans(() => configurationsWithScope(db, 'scope-77')), ['issuer_configurations']);
    });

    // Only seeded tables: an analysed empty table is scanned whatever its indexes.
    test('the expired-row sweep: the swept tables by their expires_at index', async () => {
      const found = await plans(() => sweepExpiredRows(db, now + 10, 3600));
      refuseFullScan(found, ['authorization_codes', 'verifier_nonces', 'sessions', 'interactions']);
    });

    test("the issuer's sweep: expired offers and codes by their (status, expires_at) and expires_at indexes", async () => {
      // A minute after the seed, as the minute sweep sees it: 60 of 20,000 codes have expired. (With
      // a twentieth of this small table expired, reading it whole is rightly cheaper.)
      const found = await plans(() => sweepExpired(db, new Date((now + 60) * 1000)));
      refuseFullScan(found, ['issuer_offers', 'issuer_codes']);
    });
  });
}
