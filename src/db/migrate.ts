import { type Kysely, sql } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import type { Dialect } from './dialect.ts';
import * as clients from './migrations/0001-clients.ts';
import * as users from './migrations/0002-users.ts';
import * as oidc from './migrations/0003-oidc.ts';
import * as credentials from './migrations/0004-credentials.ts';
import * as wallet from './migrations/0005-wallet.ts';

/** Migrations are listed here rather than read from a folder, so their order is explicit and reviewed. */
function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001-clients': { up: clients.up(dialect) },
    '0002-users': { up: users.up(dialect) },
    '0003-oidc': { up: oidc.up() },
    '0004-credentials': { up: credentials.up(dialect) },
    '0005-wallet': { up: wallet.up(dialect) },
  };
}

/**
 * Kysely looks for its own tables in every schema unless it is told which one: on a PostgreSQL
 * that several schemas share (one per deployment, or per test run), another schema's
 * kysely_migration_lock passes for ours, is never created here, and the migration fails.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
async function migrationTableSchema(db: Kysely<any>, dialect: Dialect): Promise<string | undefined> {
  if (dialect !== 'postgres') return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? undefined;
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
export async function migrateToLatest(db: Kysely<any>, dialect: Dialect): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(dialect) };
  const schema = await migrationTableSchema(db, dialect);
  const migrator = new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
