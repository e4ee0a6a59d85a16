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

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
export async function migrateToLatest(db: Kysely<any>, dialect: Dialect): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(dialect) };
  // Kysely looks for its migration tables in every schema of a PostgreSQL database; another
  // schema's (another deployment's, another test run's) would be taken for this one's. Name the
  // schema the connection works in.
  const migrationTableSchema =
    dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]!.schema
      : undefined;
  const migrator = new Migrator({ db, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
