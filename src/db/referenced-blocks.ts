import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.ts';

/**
 * Every column that names a block (a CID in the block store). Garbage collection keeps exactly
 * the blocks these name and backups carry exactly those, so a new column holding a CID must be
 * added here (test/db/referenced-blocks.test.ts fails until it is).
 */
export const BLOCK_COLUMNS = [
  ['users', 'profile_cid'],
  ['credentials', 'cid'],
  ['credentials', 'prepared_cid'],
  ['credential_copies', 'cid'],
] as const;

/**
 * The columns among those whose blocks are a cache, written without fsync: after an OS crash one
 * may be absent or torn, and its readers do without it.
 */
export const CACHE_BLOCK_COLUMNS = [['credentials', 'prepared_cid']] as const;

const cidsOf = (columns: ReadonlyArray<readonly [string, string]>) =>
  columns
    .map(([table, column]) => `select ${column} as cid from ${table} where ${column} is not null`)
    .join(' union ');

/** One query over both databases (and a SQLite snapshot opened on its own): each CID once. */
export const REFERENCED_BLOCKS_SQL = cidsOf(BLOCK_COLUMNS);

/** The referenced blocks that are caches (CACHE_BLOCK_COLUMNS), in the same form. */
export const CACHE_BLOCKS_SQL = cidsOf(CACHE_BLOCK_COLUMNS);

/** The CIDs some row names, at one moment (one statement, so one snapshot of the database). */
export async function readReferencedCids(db: Kysely<Database>): Promise<Set<string>> {
  const { rows } = await sql<{ cid: string }>`${sql.raw(REFERENCED_BLOCKS_SQL)}`.execute(db);
  return new Set(rows.map((row) => row.cid));
}

/** Whether any row names this block (a block is removed only when none does). */
export async function isBlockReferenced(db: Kysely<Database>, cid: string): Promise<boolean> {
  const checks = BLOCK_COLUMNS.map(
    ([table, column]) => sql`select 1 as one from ${sql.table(table)} where ${sql.ref(column)} = ${cid}`,
  );
  const { rows } = await sql<{ one: number }>`${sql.join(checks, sql` union all `)}`.execute(db);
  return rows.length > 0;
}
