import { type Kysely, sql } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import type { Dialect } from './dialect.ts';
import * as clients from './migrations/0001-clients.ts';
import * as users from './migrations/0002-users.ts';
import * as oidc from './migrations/0003-oidc.ts';
import * as credentials from './migrations/0004-credentials.ts';
import * as wallet from './migrations/0005-wallet.ts';
import * as subClientCount from './migrations/0006-sub-client-count.ts';
import * as credentialFormats from './migrations/0007-credential-formats.ts';
import * as oid4vci from './migrations/0008-oid4vci.ts';
import * as walletPage from './migrations/0009-wallet-page.ts';
import * as oidcGrants from './migrations/0010-oidc-grants.ts';
import * as preparedStatements from './migrations/0011-prepared-statements.ts';
import * as verifier from './migrations/0012-verifier.ts';
import * as issuer from './migrations/0013-issuer.ts';
import * as nonceExpiry from './migrations/0014-nonce-expiry.ts';
import * as unreferencedBlocks from './migrations/0015-unreferenced-blocks.ts';
import * as edges from './migrations/0016-edges.ts';
import * as w3cClaimPaths from './migrations/0017-w3c-claim-paths.ts';
import * as statusListKeys from './migrations/0018-status-list-keys.ts';
import * as federation from './migrations/0019-federation.ts';
import * as federationVerifiers from './migrations/0020-federation-verifiers.ts';
import * as audit from './migrations/0021-audit.ts';
import * as scaleIndexes from './migrations/0022-scale-indexes.ts';
import * as consoleAdmins from './migrations/0023-console-admins.ts';
import * as issuerSweepIndexes from './migrations/0024-issuer-sweep-indexes.ts';
import * as verifierRetentionIndex from './migrations/0025-verifier-retention-index.ts';
import * as sessionSweepIndex from './migrations/0026-session-sweep-index.ts';
import * as interactionSweepIndex from './migrations/0027-interaction-sweep-index.ts';

/** Migrations are listed here rather than read from a folder, so their order is explicit and reviewed. */
function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001-clients': { up: clients.up(dialect) },
    '0002-users': { up: users.up(dialect) },
    '0003-oidc': { up: oidc.up() },
    '0004-credentials': { up: credentials.up(dialect) },
    '0005-wallet': { up: wallet.up(dialect) },
    '0006-sub-client-count': { up: subClientCount.up(dialect) },
    '0007-credential-formats': { up: credentialFormats.up() },
    '0008-oid4vci': { up: oid4vci.up(dialect) },
    '0009-wallet-page': { up: walletPage.up(dialect) },
    '0010-oidc-grants': { up: oidcGrants.up() },
    '0011-prepared-statements': { up: preparedStatements.up() },
    '0012-verifier': { up: verifier.up(dialect) },
    '0013-issuer': { up: issuer.up(dialect) },
    '0014-nonce-expiry': { up: nonceExpiry.up() },
    '0015-unreferenced-blocks': { up: unreferencedBlocks.up() },
    '0016-edges': { up: edges.up() },
    '0017-w3c-claim-paths': { up: w3cClaimPaths.up() },
    '0018-status-list-keys': { up: statusListKeys.up() },
    '0019-federation': { up: federation.up() },
    '0020-federation-verifiers': { up: federationVerifiers.up() },
    '0021-audit': { up: audit.up(dialect) },
    '0022-scale-indexes': { up: scaleIndexes.up() },
    '0023-console-admins': { up: consoleAdmins.up(dialect) },
    '0024-issuer-sweep-indexes': { up: issuerSweepIndexes.up() },
    '0025-verifier-retention-index': { up: verifierRetentionIndex.up() },
    '0026-session-sweep-index': { up: sessionSweepIndex.up() },
    '0027-interaction-sweep-index': { up: interactionSweepIndex.up() },
  };
}

/**
 * The migrator of this database. On PostgreSQL it is told the current schema: otherwise Kysely
 * looks for its own tables in every schema, takes another schema's kysely_migration_lock for
 * this one's and fails ("relation does not exist") when several deployments or test runs share
 * one database in different schemas.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
export async function createMigrator(db: Kysely<any>, dialect: Dialect): Promise<Migrator> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(dialect) };
  if (dialect !== 'postgres') return new Migrator({ db, provider });
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return new Migrator({ db, provider, migrationTableSchema: rows[0]!.schema });
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
export async function migrateToLatest(db: Kysely<any>, dialect: Dialect): Promise<string[]> {
  const migrator = await createMigrator(db, dialect);
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
