/**
 * `node bench/scale/explain.ts [DATA_DIR]` (DATABASE_URL for PostgreSQL, with its search_path):
 * the plans of the statements the scale benchmark's requests and background work run, written as
 * the service writes them, so that a table scan behind a request shows before its latency grows.
 * Read them against a database seeded by `--only=scale`: PostgreSQL plans depend on the data.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Compilable, CompiledQuery } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { LIST_SIZE } from '../../src/status/status-list-bits.ts';

const dataDir = process.argv[2] ?? (await mkdtemp(path.join(tmpdir(), 'coffer-explain-')));
const url = process.env['DATABASE_URL'];
const database = openDatabase({ databaseUrl: url, dataDir });
const db = database.db;
await migrateToLatest(db, database.dialect);
const now = Math.floor(Date.now() / 1000);

/** Where each statement comes from, and the statement. */
const statements: Array<[string, Compilable]> = [
  [
    'credential list (credentials/credential-repository.ts listCredentials)',
    db.selectFrom('credentials').selectAll().where('user_id', '=', 1).orderBy('credential_pk', 'desc'),
  ],
  [
    'wallet page history (wallet/wallet-history.ts readHistory)',
    db
      .selectFrom('wallet_history')
      .select(['user_id', 'detail_sealed'])
      .where('user_id', 'in', [1])
      .orderBy('history_pk', 'desc')
      .limit(200),
  ],
  [
    'log-in by wallet (users/user-repository.ts findUserByWallet)',
    db.selectFrom('users').selectAll().where('tenant_id', '=', 1).where('wallet_address', '=', '0x1'),
  ],
  [
    'wallet page, the accounts of a wallet identity (users/user-repository.ts findAccountsOfIdentity)',
    db
      .selectFrom('users')
      .select(['user_id', 'did', 'email_index'])
      .where((eb) => eb.or([eb('wallet_address', '=', '0x1')]))
      .orderBy('user_id')
      .limit(50),
  ],
  [
    'wallet page, the accounts of an e-mail identity (users/user-repository.ts findAccountsOfIdentity)',
    db
      .selectFrom('users')
      .select(['user_id', 'did', 'email_index'])
      .where((eb) => eb.or([eb('email_index', 'in', ['a', 'b'])]))
      .orderBy('user_id')
      .limit(50),
  ],
  [
    'pre-authorized token (issuer/issuer-repository.ts findOfferByCodeHash)',
    db.selectFrom('issuer_offers').selectAll().where('pre_authorized_code_hash', '=', 'x'),
  ],
  [
    'issuance, open status list (issuer/status-lists.ts openList)',
    db
      .selectFrom('status_lists')
      .select(['id', 'used'])
      .where('client_id', '=', 1)
      .where('signing_key_id', '=', 'k')
      .where('kind', '=', 'token')
      .where('used', '<', LIST_SIZE / 8)
      .orderBy('updated_at', 'desc')
      .limit(1),
  ],
  [
    'status-list fetch (issuer/status-list-serving.ts)',
    db.selectFrom('status_lists').select(['id', 'version']).where('id', '=', 'x'),
  ],
  [
    'account erasure (issuer/issuer-repository.ts findUnfinishedOffersOf)',
    db
      .selectFrom('issuer_offers')
      .select(['id', 'client_id', 'callback_url'])
      .where('user_id', '=', 1)
      .where('status', 'in', ['offered', 'redeemed', 'deferred']),
  ],
  [
    'issued credentials of a tenant (issuer/issuer-repository.ts issuedCredentialsOf)',
    db
      .selectFrom('issued_credentials')
      .selectAll()
      .where('client_id', '=', 1)
      .orderBy('issued_at')
      .orderBy('id')
      .limit(1001),
  ],
  [
    'expired-row sweep, every minute, one batch (oidc/expired-rows.ts)',
    db
      .deleteFrom('authorization_codes')
      .where('code_hash', 'in', (eb) =>
        eb.selectFrom('authorization_codes').select('code_hash').where('expires_at', '<', now).limit(1000),
      ),
  ],
];

const explain = url ? 'EXPLAIN ' : 'EXPLAIN QUERY PLAN ';
for (const [name, statement] of statements) {
  const compiled = statement.compile();
  const { rows } = await db.executeQuery(CompiledQuery.raw(explain + compiled.sql, [...compiled.parameters]));
  const lines = rows.map((row) => {
    const r = row as Record<string, unknown>;
    return String(r['QUERY PLAN'] ?? r['detail'] ?? JSON.stringify(r));
  });
  console.log(`${name}\n  ${lines.join('\n  ')}\n`);
}
await database.close();
