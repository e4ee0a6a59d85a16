import type { Kysely } from 'kysely';

/**
 * Log-in interactions were never deleted: every authorization request and every visit to the
 * console without a session left a row for good (with, for an e-mail log-in, the sealed address).
 * The sweeper (oidc/expired-rows.ts) now deletes them once they expire, through this index.
 */
export function up() {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
  return async (db: Kysely<any>): Promise<void> => {
    await db.schema.createIndex('interactions_expires_idx').on('interactions').column('expires_at').execute();
  };
}
