import type { Kysely } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import type { Dialect } from './dialect.ts';
import * as clients from './migrations/0001-clients.ts';
import * as users from './migrations/0002-users.ts';
import * as oidc from './migrations/0003-oidc.ts';
import * as subClientCount from './migrations/0004-sub-client-count.ts';

/** Migrations are listed here rather than read from a folder, so their order is explicit and reviewed. */
export function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001-clients': { up: clients.up(dialect) },
    '0002-users': { up: users.up(dialect) },
    '0003-oidc': { up: oidc.up() },
    '0004-sub-client-count': { up: subClientCount.up(dialect) },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
export async function migrateToLatest(db: Kysely<any>, dialect: Dialect): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(dialect) };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
