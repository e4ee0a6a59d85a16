import { type Kysely, sql } from 'kysely';
import type { Dialect } from './dialect.ts';
import type { Database } from './schema.ts';

/**
 * After an erasure, makes the deleted rows unreadable in the files too. SQLite overwrites them
 * with zeros (secure_delete, db/node-sqlite.ts), but the WAL still holds the pages as they were
 * until it is checkpointed and cut to nothing. PostgreSQL shows deleted rows to no query; VACUUM
 * (autovacuum) reclaims their space, and its files are the operator's (docs/operations.md).
 * Returns false when readers kept SQLite from truncating: the next erasure or checkpoint does it.
 */
export async function truncateDeletedPages(db: Kysely<Database>, dialect: Dialect): Promise<boolean> {
  if (dialect !== 'sqlite') return true;
  const { rows } = await sql<{ busy: number }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
  return rows[0]?.busy === 0;
}
